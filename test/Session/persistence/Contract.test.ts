import { contract } from "../../support/persistenceContract.js"
import { jsonl } from "../../support/persistenceSubjects.js"

contract(jsonl)
