import { contract } from "../../support/persistenceContract.js"
import { jsonl, memory, sqlite } from "../../support/persistenceSubjects.js"

contract(jsonl)
contract(sqlite)
contract(memory)
