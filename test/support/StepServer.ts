/**
 * A stateless fake OpenAI-compatible server for resume tests: a real `node:http` server on
 * `127.0.0.1:0`, scoped, that answers `POST …/chat/completions` with the reply of the step the
 * request is at — the number of assistant messages already in its `messages` picks the reply — so
 * a process that died and a process that resumes get the same answer for the same step. The SSE
 * frames of a reply are written one every `frameDelayMs` (real time) so a test can kill a client
 * mid-stream. Every request is recorded.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as Wire from "./CliWire.js"

/** One reply: a tool call (with some text before it) or a final text. */
export type Step =
  | { readonly _tag: "Call"; readonly id: string; readonly name: string; readonly args: string; readonly text: string }
  | { readonly _tag: "Text"; readonly text: string }

/** A running server. */
export interface StepServer {
  /** `http://127.0.0.1:<port>` (append `/v1` for the CLI's `--base-url`) */
  readonly url: string
  /** every request body received, parsed */
  readonly requests: () => ReadonlyArray<{ readonly path: string; readonly body: unknown }>
}

const usage: Wire.FakeUsage = { input: 10, output: 5, cacheRead: 0 }

/** The SSE body of a step. */
export const bodyOf = (step: Step): string =>
  step._tag === "Call"
    ? Wire.toolCall("openai-compatible", step, usage)
    : Wire.text("openai-compatible", step.text, usage)

const assistants = (body: unknown): number => {
  if (typeof body !== "object" || body === null || !("messages" in body) || !Array.isArray(body.messages)) return 0
  return body.messages.filter((m: unknown) => typeof m === "object" && m !== null && "role" in m && m.role === "assistant")
    .length
}

/** Starts a server answering `steps` by position; closed with the Scope. */
export const make = (
  steps: ReadonlyArray<Step>,
  options: { readonly frameDelayMs?: number } = {}
): Effect.Effect<StepServer, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<{ readonly server: Http.Server; readonly handle: StepServer }>((resolve) => {
        const seen: Array<{ readonly path: string; readonly body: unknown }> = []
        const delay = options.frameDelayMs ?? 2
        const server = Http.createServer((req, res) => {
          let raw = ""
          req.setEncoding("utf8")
          req.on("data", (d: string) => {
            raw += d
          })
          req.on("end", () => {
            let body: unknown
            try {
              body = JSON.parse(raw)
            } catch {
              body = undefined
            }
            seen.push({ path: req.url ?? "", body })
            const step = steps[Math.min(assistants(body), steps.length - 1)]
            if (step === undefined) {
              res.writeHead(500, { "content-type": "application/json" })
              return res.end(JSON.stringify({ error: { message: "no step" } }))
            }
            res.writeHead(200, { "content-type": "text/event-stream" })
            const frames = bodyOf(step).split(/(?<=\n\n)/)
            let i = 0
            const next = () => {
              if (res.destroyed) return
              const frame = frames[i++]
              if (frame === undefined) return void res.end()
              res.write(frame)
              setTimeout(next, delay)
            }
            next()
          })
        })
        server.listen(0, "127.0.0.1", () => {
          const port = (server.address() as AddressInfo).port
          resolve({ server, handle: { url: `http://127.0.0.1:${port}`, requests: () => seen.slice() } })
        })
      })
    ),
    ({ server }) =>
      Effect.promise(() =>
        new Promise<void>((resolve) => {
          server.closeAllConnections()
          server.close(() => resolve())
        })
      )
  ).pipe(Effect.map(({ handle }) => handle))
