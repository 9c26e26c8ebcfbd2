/**
 * `npm run check`: the type-check (`tsc` strict) and the Effect language-service diagnostics, run side by
 * side (each is one single-threaded pass over the project, so on two cores the pair takes about as long as
 * the slower one). Each tool's output is printed when it ends; the exit code is non-zero when either failed.
 */
import { spawn } from "node:child_process"

const run = (command: string, args: ReadonlyArray<string>): Promise<number> =>
  new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] })
    const out: Array<Buffer> = []
    const err: Array<Buffer> = []
    child.stdout.on("data", (b: Buffer) => out.push(b))
    child.stderr.on("data", (b: Buffer) => err.push(b))
    child.on("error", (e) => {
      process.stderr.write(`${command}: ${e.message}\n`)
      resolve(1)
    })
    child.on("close", (code, signal) => {
      process.stdout.write(Buffer.concat(out))
      process.stderr.write(Buffer.concat(err))
      resolve(code ?? (signal === null ? 1 : 128))
    })
  })

const codes = await Promise.all([
  run("tsc", ["-p", "tsconfig.json"]),
  run("effect-language-service", ["diagnostics", "--project", "tsconfig.json"])
])
process.exitCode = codes.some((code) => code !== 0) ? 1 : 0
