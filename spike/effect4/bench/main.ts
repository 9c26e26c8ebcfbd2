/** One case of the v4 side (the mini-agent probe on the port), in a fresh process. Prints one JSON line. */
import { flag } from "../../common/measure.js"
import { probe } from "./probe.js"

const result = await probe({
  agents: Number(flag("agents", "100")),
  turns: Number(flag("turns", "2")),
  chunks: Number(flag("chunks", "100")),
  batch: Number(flag("batch", "1"))
})
process.stdout.write(`${JSON.stringify(result)}\n`)
