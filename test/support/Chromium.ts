/**
 * Headless Chromium driven over the DevTools protocol (a real browser, no test double): loads a
 * page, counts console errors, uncaught exceptions and network requests other than the page itself,
 * evaluates expressions and takes a screenshot. The browser runs with a fresh profile and is killed
 * when the scope closes.
 *
 * Without a `chromium` binary on this machine the tests that need it skip with one notice
 * ({@link chromiumAbsent}); `apt-get install chromium` provides it.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const candidates = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"]

/** The browser binary, when installed. */
export const chromiumPath: string | undefined = candidates.find((p) => existsSync(p))

/** `true` when no browser is installed, after printing the one notice saying what `what` skips. */
export const chromiumAbsent = (what: string): boolean => {
  if (chromiumPath !== undefined) return false
  console.warn(`notice: chromium is not installed (apt-get install chromium); ${what} skipped`)
  return true
}

/** What loading a page showed. */
export interface PageReport {
  /** console.error calls, uncaught exceptions and error log entries (CSP violations included) */
  readonly errors: ReadonlyArray<string>
  /** every request other than the page's own document */
  readonly requests: ReadonlyArray<string>
  /** the PNG screenshot */
  readonly screenshot: Buffer
  /** the values of `expressions`, evaluated after the load (JSON round-tripped) */
  readonly values: ReadonlyArray<unknown>
}

interface CdpMessage {
  readonly id?: number
  readonly method?: string
  readonly params?: Record<string, unknown>
  readonly result?: Record<string, unknown>
  readonly error?: { readonly message: string }
  readonly sessionId?: string
}

const launch = (): Effect.Effect<{ readonly url: string }, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<{ url: string; kill: () => Promise<void> }>((resolve, reject) => {
        const profile = mkdtempSync(join(tmpdir(), "harness-chromium-"))
        const child = spawn(chromiumPath ?? "chromium", [
          "--headless=new",
          "--no-sandbox",
          "--disable-gpu",
          "--no-first-run",
          "--no-default-browser-check",
          "--disable-background-networking",
          "--disable-component-update",
          "--disable-sync",
          "--remote-debugging-port=0",
          `--user-data-dir=${profile}`,
          "about:blank"
        ], { stdio: ["ignore", "ignore", "pipe"] })
        let err = ""
        const exited = new Promise<void>((r) => child.once("exit", () => r()))
        const kill = async () => {
          child.kill("SIGKILL")
          await exited
          rmSync(profile, { recursive: true, force: true, maxRetries: 5 })
        }
        child.stderr.setEncoding("utf8")
        child.stderr.on("data", (d: string) => {
          err += d
          const m = /DevTools listening on (ws:\/\/\S+)/.exec(err)
          if (m !== null) resolve({ url: m[1]!, kill })
        })
        child.on("exit", (code) => reject(new Error(`chromium exited (${code}) before listening: ${err}`)))
      })
    ),
    (b) => Effect.promise(b.kill)
  )

/**
 * Loads `fileUrl` in a fresh tab and reports what happened (see {@link PageReport}).
 */
export const load = (fileUrl: string, expressions: ReadonlyArray<string> = []): Effect.Effect<PageReport, never, Scope.Scope> =>
  Effect.flatMap(launch(), ({ url }) =>
    Effect.promise(async () => {
      const ws = new WebSocket(url)
      await new Promise<void>((resolve, reject) => {
        ws.addEventListener("open", () => resolve())
        ws.addEventListener("error", () => reject(new Error("cannot connect to chromium")))
      })
      let next = 1
      const pending = new Map<number, (m: CdpMessage) => void>()
      const errors: Array<string> = []
      const requests: Array<string> = []
      let loaded: () => void = () => {}
      const loadFired = new Promise<void>((resolve) => (loaded = resolve))
      ws.addEventListener("message", (ev) => {
        const m = JSON.parse(String(ev.data)) as CdpMessage
        if (m.id !== undefined) return pending.get(m.id)?.(m)
        const p = m.params ?? {}
        if (m.method === "Network.requestWillBeSent") {
          const request = p["request"] as { url: string }
          if (request.url !== fileUrl) requests.push(request.url)
        } else if (m.method === "Runtime.consoleAPICalled" && p["type"] === "error") errors.push(JSON.stringify(p["args"]))
        else if (m.method === "Runtime.exceptionThrown") errors.push(JSON.stringify(p["exceptionDetails"]))
        else if (m.method === "Log.entryAdded") {
          const entry = p["entry"] as { level: string; text: string }
          if (entry.level === "error") errors.push(entry.text)
        } else if (m.method === "Page.loadEventFired") loaded()
      })
      const send = (method: string, params: Record<string, unknown> = {}, sessionId?: string) =>
        new Promise<Record<string, unknown>>((resolve, reject) => {
          const id = next++
          pending.set(id, (m) => m.error === undefined ? resolve(m.result ?? {}) : reject(new Error(`${method}: ${m.error.message}`)))
          ws.send(JSON.stringify({ id, method, params, ...(sessionId === undefined ? {} : { sessionId }) }))
        })
      const { targetId } = await send("Target.createTarget", { url: "about:blank" })
      const { sessionId } = await send("Target.attachToTarget", { targetId, flatten: true })
      const session = String(sessionId)
      for (const domain of ["Network", "Runtime", "Log", "Page"]) await send(`${domain}.enable`, {}, session)
      await send("Page.navigate", { url: fileUrl }, session)
      await loadFired
      // a moment for late console output or requests started by scripts
      await new Promise((r) => setTimeout(r, 300))
      const values: Array<unknown> = []
      for (const expression of expressions) {
        const r = await send("Runtime.evaluate", { expression: `JSON.stringify(${expression})`, returnByValue: true }, session)
        const value = (r["result"] as { value?: string }).value
        values.push(value === undefined ? undefined : JSON.parse(value))
      }
      const shot = await send("Page.captureScreenshot", { format: "png", captureBeyondViewport: true }, session)
      ws.close()
      return { errors, requests, values, screenshot: Buffer.from(String(shot["data"]), "base64") }
    }))
