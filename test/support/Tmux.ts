/**
 * Test helper: `harness chat` on a real pseudo-terminal (tmux), the bundled CLI and the scripted
 * model. {@link startChat} starts the chat in a detached tmux session of its own server (killed
 * with the Scope); the pane reads the screen (`capture-pane`), sends keys, pastes, and records
 * everything the program wrote to the terminal (`pipe-pane`, {@link Pane.recording}). Waits poll
 * the screen until the expected content appears (bounded), never on timing.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { spawnSync } from "node:child_process"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import * as Cli from "./Cli.js"

/** `true` when tmux is installed (tests skip with one notice otherwise) */
export const tmuxAvailable = spawnSync("tmux", ["-V"], { encoding: "utf8" }).status === 0

export const TIMEOUT = 90_000
export const WAIT_MS = 30_000


export interface Pane {
  /** sends tmux key names (`Enter`, `C-c`) or literal text with `literal` */
  readonly keys: (...keys: ReadonlyArray<string>) => void
  readonly type: (text: string) => void
  /** pastes `text` as a bracketed paste (the application enabled bracketed paste mode) */
  readonly paste: (text: string) => void
  /** the screen and its scrollback, as plain text */
  readonly screen: () => string
  /** the screen with its escape sequences (colours) */
  readonly rawScreen: () => string
  /** polls the screen until `predicate` holds (bounded); fails with the last screen */
  readonly waitFor: (what: string, predicate: (screen: string) => boolean) => Effect.Effect<string>
  readonly dead: () => boolean
  /** the process id of the chat (the pane's process: `exec` replaced the shell) */
  readonly pid: () => number
  /** every byte the chat wrote to the terminal so far (latin1: one char per byte) */
  readonly recording: () => string
}

let sockets = 0

/** Starts `harness chat ...args` in a detached tmux session of its own server (killed with the Scope). */
export const startChat = (
  args: ReadonlyArray<string>,
  options: {
    readonly cwd: string
    readonly home: string
    /** environment overrides (e.g. `NO_COLOR: ""` for colours) */
    readonly env?: Readonly<Record<string, string>>
    readonly rows?: number
  }
): Effect.Effect<Pane, never, Scope.Scope> =>
  Effect.gen(function*() {
    const bundle = yield* Cli.bundle
    const socket = `harness-tui-${process.pid}-${sockets++}`
    const tmux = (...a: ReadonlyArray<string>) => spawnSync("tmux", ["-L", socket, "-f", "/dev/null", ...a], { encoding: "utf8" })
    const env = Cli.cleanEnv(options.home, options.env)
    const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`
    const script = join(options.home, `chat-${socket}.sh`)
    writeFileSync(
      script,
      [
        "#!/bin/sh",
        "unset TMUX",
        ...Object.entries(env).filter(([k]) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(k)).map(([k, v]) => `export ${k}=${quote(v)}`),
        `cd ${quote(options.cwd)}`,
        `exec ${quote(process.execPath)} ${quote(bundle)} chat ${args.map(quote).join(" ")}`
      ].join("\n")
    )
    yield* Effect.acquireRelease(
      Effect.sync(() => {
        const started = tmux("new-session", "-d", "-x", "100", "-y", String(options.rows ?? 50), `sh ${quote(script)}`, ";", "set-option", "-g", "remain-on-exit", "on")
        if (started.status !== 0) throw new Error(`tmux new-session failed: ${started.stderr}`)
      }),
      () => Effect.sync(() => void tmux("kill-server"))
    )
    const record = join(options.home, `recording-${socket}.bin`)
    tmux("pipe-pane", "-o", `cat >> ${quote(record)}`)
    const screen = () => tmux("capture-pane", "-p", "-J", "-S", "-500").stdout
    return {
      keys: (...keys) => void tmux("send-keys", ...keys),
      type: (text) => void tmux("send-keys", "-l", text),
      paste: (text) => {
        const file = join(options.home, `paste-${socket}.txt`)
        writeFileSync(file, text)
        tmux("load-buffer", file)
        tmux("paste-buffer", "-p", "-d")
      },
      screen,
      rawScreen: () => tmux("capture-pane", "-p", "-e", "-S", "-500").stdout,
      pid: () => Number(tmux("display-message", "-p", "#{pane_pid}").stdout.trim()),
      recording: () => existsSync(record) ? readFileSync(record, "latin1") : "",
      dead: () => tmux("display-message", "-p", "#{pane_dead}").stdout.trim() === "1",
      waitFor: (what, predicate) =>
        Effect.gen(function*() {
          const deadline = Date.now() + WAIT_MS
          for (;;) {
            const text = screen()
            if (predicate(text)) return text
            if (Date.now() > deadline) return yield* Effect.die(new Error(`timed out waiting for ${what}; screen:\n${text}`))
            yield* Effect.sleep(100)
          }
        })
    }
  })

/** The input editor's lines: between the last two horizontal rules of the screen. */
export const inputLines = (screen: string): Array<string> => {
  const lines = screen.split("\n")
  const rules = lines.flatMap((l, i) => (/^─{20,}$/.test(l.trim()) ? [i] : []))
  if (rules.length < 2) return []
  return lines.slice(rules[rules.length - 2]! + 1, rules[rules.length - 1]!).map((l) => l.trimEnd())
}

/** The user messages of the session log (text), in order. */
export const userMessages = (home: string): Array<{ readonly type: string; readonly text: string }> =>
  Cli.sessionLogs(home).flatMap((file) =>
    readFileSync(file, "utf8").split("\n").filter((l) => l.trim() !== "").flatMap((line) => {
      let event: { type: string; data?: { content?: Array<{ type: string; text?: string }> } }
      try {
        event = JSON.parse(line)
      } catch {
        return [] // a line still being written
      }
      if (event.type !== "user/message" && event.type !== "steering/message") return []
      return [{ type: event.type, text: (event.data?.content ?? []).map((b) => b.text ?? "").join("") }]
    })
  )

export const writeScript = (dir: string, responses: ReadonlyArray<unknown>): string => {
  const file = join(dir, "script.json")
  writeFileSync(file, JSON.stringify({ provider: "scripted", model: "demo", responses }))
  return file
}

