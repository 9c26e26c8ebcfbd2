/**
 * Test helper for end-to-end tests of the bundled `harness` CLI: builds the bundle once per test
 * run and spawns it as a separate process with a clean environment.
 *
 * Build once: {@link bundle} builds `src/Cli/main.ts` with the same esbuild options as the
 * `bundle` script into `.tmp/cli-e2e/<hash of src/ and package.json>/harness.mjs` (inside the
 * repository, like the package's own bundle). A bundle for the
 * same sources is reused across test files and runs; concurrent workers building the same hash
 * wait on a lock directory instead of building twice; bundles of other sources older than 6 hours
 * are pruned. `dist-bundle/` is never touched (others may be rebuilding it while the tests run).
 *
 * Clean environment: the child gets the parent's environment minus every `DEEPSEEK_*`,
 * `ANTHROPIC_*`, `OPENAI_*`, `EFFECT_HARNESS_*`, `NODE_OPTIONS` and `VITEST*` variable, plus
 * `EFFECT_HARNESS_HOME=<home>` (always a temp dir), `NO_COLOR=1` and what the test adds. A child
 * still running when its Scope closes is killed with SIGKILL; a child running longer than
 * `timeoutMs` (default 45 s) is killed too, and its result says so.
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as FileSystem from "effect/FileSystem"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as esbuild from "esbuild"
import { spawn } from "node:child_process"
import { createHash } from "node:crypto"
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync
} from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import type { SessionEvent } from "../../src/Session/SessionEvent.js"
import * as Validate from "../../src/Session/Validate.js"

/** The repository root (absolute, with a trailing separator). */
export const repoRoot: string = fileURLToPath(new URL("../../", import.meta.url))

const packageJson = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as {
  readonly name: string
  readonly version: string
  readonly homepage: string
}

/** The attribution header every provider request must carry (DEC-8), from package.json. */
export const expectedUserAgent = `${packageJson.name}/${packageJson.version} (+${packageJson.homepage})`

/** The package version (what `harness --version` prints). */
export const version = packageJson.version

const listFiles = (dir: string): Array<string> => {
  const out: Array<string> = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const abs = join(dir, entry.name)
    if (entry.isDirectory()) out.push(...listFiles(abs))
    else if (entry.isFile()) out.push(abs)
  }
  return out
}

const sourceHash = (): string => {
  const hash = createHash("sha256")
  const files = [...listFiles(join(repoRoot, "src")), join(repoRoot, "package.json")].sort()
  for (const file of files) {
    hash.update(relative(repoRoot, file))
    hash.update("\0")
    hash.update(readFileSync(file))
    hash.update("\0")
  }
  return hash.digest("hex").slice(0, 16)
}

/** The esbuild options of the `bundle` script in package.json (keep in sync). */
export const bundleOptions = (outfile: string): esbuild.BuildOptions => ({
  absWorkingDir: repoRoot,
  entryPoints: ["src/Cli/main.ts"],
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node22",
  logLevel: "warning",
  outfile,
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" }
})

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

// bundles of older sources untouched for 6 hours are removed (another run may still use a recent one)
const pruneOldBundles = (keep: string): void => {
  const parent = join(keep, "..")
  for (const entry of readdirSync(parent, { withFileTypes: true })) {
    const abs = join(parent, entry.name)
    if (!entry.isDirectory() || abs === keep) continue
    try {
      if (Date.now() - statSync(abs).mtimeMs > 6 * 3600_000) rmSync(abs, { recursive: true, force: true })
    } catch {
      // removed concurrently by another worker: nothing to do
    }
  }
}

const buildBundle = async (): Promise<string> => {
  const dir = join(repoRoot, ".tmp", "cli-e2e", sourceHash())
  const file = join(dir, "harness.mjs")
  if (existsSync(file)) return file
  mkdirSync(dir, { recursive: true })
  const lock = join(dir, "build.lock")
  const deadline = Date.now() + 180_000
  for (;;) {
    if (existsSync(file)) return file
    try {
      mkdirSync(lock)
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
      // another worker builds the same sources; a lock older than 2 minutes is stale
      const age = (() => {
        try {
          return Date.now() - statSync(lock).mtimeMs
        } catch {
          return 0
        }
      })()
      if (age > 120_000) rmSync(lock, { recursive: true, force: true })
      if (Date.now() > deadline) throw new Error(`timed out waiting for the CLI bundle build (${lock})`)
      await sleep(200)
    }
  }
  try {
    if (existsSync(file)) return file
    const tmp = join(dir, `harness.${process.pid}.tmp.mjs`)
    await esbuild.build(bundleOptions(tmp))
    renameSync(tmp, file)
    pruneOldBundles(dir)
    return file
  } finally {
    rmSync(lock, { recursive: true, force: true })
  }
}

let built: Promise<string> | undefined

/**
 * The path of a bundle of the current sources (built at most once per process, reused across
 * processes for the same sources).
 */
export const bundlePath = (): Promise<string> => (built ??= buildBundle())

/** {@link bundlePath} as an Effect (a build failure is a defect: the tests cannot run). */
export const bundle: Effect.Effect<string> = Effect.promise(() => bundlePath())

/** What a finished CLI process left. */
export interface CliResult {
  /** exit code, `null` when killed by a signal */
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
  /** `true` when the helper killed it after `timeoutMs` */
  readonly timedOut: boolean
}

/** How to run the CLI. */
export interface CliOptions {
  /** working directory of the process */
  readonly cwd: string
  /** `EFFECT_HARNESS_HOME` (always a temp dir in tests) */
  readonly home: string
  /** extra environment variables (e.g. an API key) */
  readonly env?: Readonly<Record<string, string>>
  /** text written to stdin, then stdin is closed (default: closed immediately) */
  readonly stdin?: string
  /** keep stdin open after `stdin` (write more with `CliProcess.write`, close with `endInput`) */
  readonly stdinOpen?: boolean
  readonly timeoutMs?: number
}

const scrubbed = /^(DEEPSEEK_|ANTHROPIC_|OPENAI_|EFFECT_HARNESS_|VITEST|NODE_OPTIONS$)/

/** The child environment: the parent's minus provider/harness variables, plus `home` and `extra`. */
export const cleanEnv = (home: string, extra: Readonly<Record<string, string>> = {}): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !scrubbed.test(k)) env[k] = v
  }
  return { ...env, EFFECT_HARNESS_HOME: home, NO_COLOR: "1", ...extra }
}

/** A running CLI process. */
export interface CliProcess {
  readonly pid: number
  /** waits for the exit and returns everything it printed */
  readonly result: Effect.Effect<CliResult>
  /** sends a signal */
  readonly kill: (signal: NodeJS.Signals) => Effect.Effect<void>
  /** waits until the stdout (or stderr) collected so far satisfies `predicate` (or the process exits) */
  readonly waitFor: (stream: "stdout" | "stderr", predicate: (text: string) => boolean) => Effect.Effect<string>
  /** writes to stdin (with `stdinOpen`) */
  readonly write: (text: string) => Effect.Effect<void>
  /** closes stdin */
  readonly endInput: Effect.Effect<void>
}

/**
 * Spawns `node <bundle> ...args`; the process is killed (SIGKILL) if still running when the Scope
 * closes.
 */
export const spawnCli = (
  args: ReadonlyArray<string>,
  options: CliOptions
): Effect.Effect<CliProcess, never, Scope.Scope> =>
  Effect.gen(function*() {
    const script = yield* bundle
    return yield* Effect.acquireRelease(
      Effect.sync(() => {
        const child = spawn(process.execPath, [script, ...args], {
          cwd: options.cwd,
          env: cleanEnv(options.home, options.env),
          stdio: ["pipe", "pipe", "pipe"]
        })
        let stdout = ""
        let stderr = ""
        let timedOut = false
        let listeners: Array<() => void> = []
        const notify = () => {
          const current = listeners
          listeners = []
          for (const l of current) l()
        }
        child.stdout.setEncoding("utf8")
        child.stderr.setEncoding("utf8")
        child.stdout.on("data", (d: string) => {
          stdout += d
          notify()
        })
        child.stderr.on("data", (d: string) => {
          stderr += d
          notify()
        })
        child.stdin.on("error", () => {
          // the CLI may exit before reading stdin: EPIPE is expected
        })
        if (options.stdin !== undefined) child.stdin.write(options.stdin)
        if (options.stdinOpen !== true) child.stdin.end()
        const timer = setTimeout(() => {
          timedOut = true
          child.kill("SIGKILL")
        }, options.timeoutMs ?? 45_000)
        const exited = new Promise<CliResult>((resolve) => {
          child.on("close", (code, signal) => {
            clearTimeout(timer)
            notify()
            resolve({ code, signal, stdout, stderr, timedOut })
          })
        })
        let done = false
        void exited.then(() => {
          done = true
          notify()
        })
        const handle: CliProcess = {
          pid: child.pid ?? -1,
          result: Effect.promise(() => exited),
          kill: (signal) => Effect.sync(() => void child.kill(signal)),
          write: (text) => Effect.sync(() => void child.stdin.write(text)),
          endInput: Effect.sync(() => void child.stdin.end()),
          waitFor: (stream, predicate) =>
            Effect.promise(() =>
              new Promise<string>((resolve) => {
                const check = () => {
                  const text = stream === "stdout" ? stdout : stderr
                  if (predicate(text) || done) resolve(text)
                  else listeners.push(check)
                }
                check()
              })
            )
        }
        return { child, handle, exited: () => done }
      }),
      ({ child, exited }) =>
        Effect.sync(() => {
          if (!exited()) child.kill("SIGKILL")
        })
    ).pipe(Effect.map(({ handle }) => handle))
  })

/** Runs the CLI to completion. */
export const runCli = (args: ReadonlyArray<string>, options: CliOptions): Effect.Effect<CliResult> =>
  Effect.scoped(Effect.flatMap(spawnCli(args, options), (p) => p.result))

/** A real path of a fresh temp directory, removed when the Scope closes. */
export const tempDir = (prefix: string): Effect.Effect<string, never, Scope.Scope> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const dir = yield* fs.makeTempDirectoryScoped({ prefix })
    return realpathSync(dir)
  }).pipe(Effect.orDie, Effect.provide(NodeServices.layer))

/** Every regular file under `dir` (recursively), absolute; empty when `dir` does not exist. */
export const filesUnder = (dir: string): Array<string> => existsSync(dir) ? listFiles(dir) : []

/** The JSONL session logs under `<home>/sessions`. */
export const sessionLogs = (home: string): Array<string> =>
  filesUnder(join(home, "sessions")).filter((f) => f.endsWith(".jsonl"))

/** A parsed JSONL session log: its header line and its events (validated, S-11). */
export interface SessionLog {
  readonly file: string
  readonly header: {
    readonly type: string
    readonly id: string
    readonly cwd?: string
    readonly parentSession?: string
  }
  readonly events: ReadonlyArray<SessionEvent>
}

/** Reads and fully validates a JSONL log (`Validate.seed`: envelopes, payloads, seqs, surface). */
export const readLog = (file: string): SessionLog => {
  const lines = readFileSync(file, "utf8").split("\n")
  if (lines[lines.length - 1] === "") lines.pop()
  const [first, ...rest] = lines
  if (first === undefined) throw new Error(`${file} is empty`)
  const header = JSON.parse(first) as SessionLog["header"]
  const validated = Validate.seed(rest.map((line) => JSON.parse(line) as unknown))
  if (Result.isFailure(validated)) throw new Error(`${file}: ${validated.failure.message}`)
  return { file, header, events: validated.success }
}

/**
 * Problems with the turn enclosure of a log: every `turn/start` closed by a `turn/end` of the same
 * turn before the next `turn/start` and before the end of the log. Empty when balanced.
 */
export const enclosureProblems = (events: ReadonlyArray<SessionEvent>): Array<string> => {
  const problems: Array<string> = []
  let open: number | undefined
  for (const e of events) {
    if (e.type === "turn/start") {
      if (open !== undefined) problems.push(`turn ${open} not closed before event ${e.seq}`)
      open = e.data.turn
    } else if (e.type === "turn/end") {
      if (open === undefined) problems.push(`turn/end at ${e.seq} without an open turn`)
      else if (e.data.turn !== open) problems.push(`turn/end at ${e.seq} closes turn ${e.data.turn}, open is ${open}`)
      open = undefined
    }
  }
  if (open !== undefined) problems.push(`turn ${open} is still open at the end of the log`)
  return problems
}

/** The non-empty lines of a text. */
export const linesOf = (text: string): Array<string> => text.split("\n").filter((l) => l.trim() !== "")

/** A stack-trace frame line (`    at f (file:1:2)`). */
export const stackFrame = /^\s+at\s.+[:(]/m

/** Waits until `file` exists, looking every 25 ms. */
export const waitForFile = (file: string): Effect.Effect<void> =>
  Effect.suspend(() => existsSync(file) ? Effect.void : Effect.andThen(Effect.sleep(25), waitForFile(file)))

/** One tool call of a scripted step. */
export interface ScriptedCall {
  readonly id: string
  readonly name: string
  readonly args: Readonly<Record<string, unknown>>
}

/** Writes `<dir>/script.json` for `--script`: one step making `calls`, then a final `answer`; returns its path. */
export const toolCallScript = (dir: string, calls: ReadonlyArray<ScriptedCall>, answer = "done"): string => {
  const file = join(dir, "script.json")
  const step = calls.map((c) => ({ toolCall: { id: c.id, name: c.name, arguments: JSON.stringify(c.args) } }))
  writeFileSync(
    file,
    JSON.stringify({ provider: "scripted", model: "demo", responses: [[...step, { finish: { kind: "tool-calls" } }], { text: answer }] })
  )
  return file
}
