import { contract } from "../../support/persistenceContract.js"
import { jsonl, sqlite } from "../../support/persistenceSubjects.js"

contract(jsonl)
contract(sqlite)
