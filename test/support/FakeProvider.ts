/**
 * A fake LLM provider: a real `node:http` server on `127.0.0.1:0`, scoped (closed with its Scope),
 * that answers each request with the next scripted {@link Reply} and records every request.
 *
 * ```ts
 * const fake = yield* FakeProvider.make()
 * yield* fake.enqueue(FakeProvider.sseFile(FakeProvider.fixture("deepseek/text-stop-chat.sse")))
 * // point an adapter at fake.url, run it, then:
 * const [request] = yield* fake.requests   // { method, path, headers, rawBody, body }
 * ```
 *
 * Replies (constructors below):
 * - `sse(body)` / `sseFile(path)`: status 200, `content-type: text/event-stream`, the body written in
 *   small pieces of seeded random size (1..`maxPiece` bytes, default 1..64), one write per macrotask
 *   so the client sees many separate reads;
 * - `http(text)` / `httpFile(path)`: a full captured response (`.http` fixture: status line,
 *   headers, blank line, body);
 * - `status(code, { retryAfter?, body?, headers? })`: an error answer (e.g. 429/500/529 with
 *   `Retry-After`);
 * - `stall()`: never answers (headers never sent); `stallMidBody(body, after)`: sends the first
 *   `after` bytes of an SSE body, then nothing; `drop(body, after)`: sends `after` bytes, then
 *   destroys the socket;
 * - `timed(steps, { end? })`: status 200 SSE headers at once, then each step in order: a string or
 *   bytes is written, a number waits that many milliseconds (real time); the response ends after the
 *   last step unless `end: false` (then it stays open). For keep-alive and idle-gap timer tests.
 *
 * With an empty queue the server answers 500 `{"error":{"message":"no reply scripted"}}`.
 * `awaitRequests(n)` waits until n requests were received; `awaitClose(i)` until the i-th request's
 * connection closed, telling whether the response was still unfinished (the client went away).
 * Wire fixtures come from two folders of the same layout ({@link WireRoot}): the project's own corpus in
 * `test/fixtures/wire/` ({@link corpus}, always there) and the captures recorded from the real providers
 * beside the repository ({@link captures}: `HARNESS_SHARED_FIXTURES`, else `../shared/fixtures/wire/`), an
 * extra differential suite that runs when present ({@link wireRoots}).
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { existsSync, readFileSync } from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { fileURLToPath } from "node:url"
import * as Wire from "./CliWire.js"

/** One received request. Header names are lower-case; repeated headers are joined with ", ". */
export interface RecordedRequest {
  readonly method: string
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  readonly rawBody: string
  /** the body parsed as JSON, `undefined` when it is not JSON */
  readonly body: unknown
  /** the client's port: requests with the same one came over the same (keep-alive) socket */
  readonly remotePort: number
}

/** A scripted answer. */
export type Reply =
  | {
    readonly _tag: "Sse"
    readonly body: Uint8Array
    readonly seed: number
    readonly maxPiece: number
    readonly headers: Readonly<Record<string, string>>
  }
  | {
    readonly _tag: "Http"
    readonly status: number
    readonly reason: string
    readonly headers: Readonly<Record<string, string>>
    readonly body: Uint8Array
  }
  | { readonly _tag: "Stall" }
  | { readonly _tag: "StallMidBody"; readonly body: Uint8Array; readonly after: number }
  | { readonly _tag: "Drop"; readonly body: Uint8Array; readonly after: number }
  | {
    readonly _tag: "Timed"
    readonly steps: ReadonlyArray<Uint8Array | number>
    readonly end: boolean
    readonly headers: Readonly<Record<string, string>>
  }

/** The server handle. */
export interface FakeProvider {
  /** base URL, `http://127.0.0.1:<port>` */
  readonly url: string
  /** appends replies, consumed one per request in order */
  readonly enqueue: (...replies: ReadonlyArray<Reply>) => Effect.Effect<void>
  /** the requests received so far */
  readonly requests: Effect.Effect<ReadonlyArray<RecordedRequest>>
  /** waits until at least `n` requests were received */
  readonly awaitRequests: (n: number) => Effect.Effect<ReadonlyArray<RecordedRequest>>
  /** waits until the connection of request `i` (0-based) closed; `early`: response unfinished */
  readonly awaitClose: (i: number) => Effect.Effect<{ readonly early: boolean }>
}

const encoder = new TextEncoder()
const bytes = (body: string | Uint8Array): Uint8Array => typeof body === "string" ? encoder.encode(body) : body

/** An SSE answer written in seeded random pieces of 1..`maxPiece` bytes. */
export const sse = (
  body: string | Uint8Array,
  options: { readonly seed?: number; readonly maxPiece?: number; readonly headers?: Record<string, string> } = {}
): Reply => ({
  _tag: "Sse",
  body: bytes(body),
  seed: options.seed ?? 42,
  maxPiece: options.maxPiece ?? 64,
  headers: options.headers ?? {}
})

/** Parses a full HTTP response text (`.http` fixture format). */
export const http = (raw: string | Uint8Array): Reply => {
  const data = bytes(raw)
  let split = -1
  let sepLength = 4
  for (let i = 0; i + 3 < data.length; i++) {
    if (data[i] === 13 && data[i + 1] === 10 && data[i + 2] === 13 && data[i + 3] === 10) {
      split = i
      break
    }
    if (data[i] === 10 && data[i + 1] === 10) {
      split = i
      sepLength = 2
      break
    }
  }
  if (split < 0) throw new Error("FakeProvider.http: no blank line after the headers")
  const head = new TextDecoder().decode(data.subarray(0, split)).split(/\r?\n/)
  const statusLine = /^HTTP\/\d(?:\.\d)?\s+(\d{3})\s*(.*)$/.exec(head[0] ?? "")
  if (statusLine === null) throw new Error(`FakeProvider.http: bad status line ${JSON.stringify(head[0])}`)
  const headers: Record<string, string> = {}
  for (const line of head.slice(1)) {
    const colon = line.indexOf(":")
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
  }
  return {
    _tag: "Http",
    status: Number(statusLine[1]),
    reason: statusLine[2] ?? "",
    headers,
    body: data.subarray(split + sepLength)
  }
}

/** An error answer, e.g. `status(429, { retryAfter: "2" })`. */
export const status = (
  code: number,
  options: { readonly retryAfter?: string; readonly body?: string; readonly headers?: Record<string, string> } = {}
): Reply => ({
  _tag: "Http",
  status: code,
  reason: "",
  headers: {
    "content-type": "application/json",
    ...(options.retryAfter === undefined ? {} : { "retry-after": options.retryAfter }),
    ...options.headers
  },
  body: bytes(options.body ?? JSON.stringify({ error: { message: `fake error ${code}` } }))
})

/** Never answers. */
export const stall = (): Reply => ({ _tag: "Stall" })

/**
 * A priced DeepSeek turn with a retry and a tool call: a 429 (`Retry-After: 0`), then a streamed
 * `ls` call (19 in, 30 out, 320 cache reads), then `answer` (7 in, 12 out, 480 cache reads).
 */
export const retriedToolTurn = (answer: string): ReadonlyArray<Reply> => [
  status(429, { retryAfter: "0" }),
  sse(Wire.toolCall("deepseek", { id: "call_1", name: "ls", args: "{}", text: "Looking." }, { input: 19, output: 30, cacheRead: 320 })),
  sse(Wire.text("deepseek", answer, { input: 7, output: 12, cacheRead: 480 }))
]

/** Sends the first `after` bytes of an SSE body, then nothing. */
export const stallMidBody = (body: string | Uint8Array, after: number): Reply => ({
  _tag: "StallMidBody",
  body: bytes(body),
  after
})

/** Sends the first `after` bytes of an SSE body, then destroys the socket. */
export const drop = (body: string | Uint8Array, after: number): Reply => ({ _tag: "Drop", body: bytes(body), after })

/** A timed answer: strings/bytes are written, numbers wait that many milliseconds (see the module doc). */
export const timed = (
  steps: ReadonlyArray<string | Uint8Array | number>,
  options: { readonly end?: boolean; readonly headers?: Record<string, string> } = {}
): Reply => ({
  _tag: "Timed",
  steps: steps.map((step) => (typeof step === "number" ? step : bytes(step))),
  end: options.end ?? true,
  headers: options.headers ?? {}
})

/**
 * The captured fixture folder: `HARNESS_SHARED_FIXTURES` when set (a test of the fresh-clone condition sets
 * it to a folder that does not exist), else `../shared/fixtures/wire/` beside the repository.
 */
export const fixturesDir: string = ((dir) => (dir.endsWith("/") ? dir : `${dir}/`))(
  process.env["HARNESS_SHARED_FIXTURES"] ?? fileURLToPath(new URL("../../../shared/fixtures/wire/", import.meta.url))
)

/** `true` when the fixture folder exists. */
export const fixturesAvailable: boolean = existsSync(`${fixturesDir}INDEX.md`)

/**
 * `true` when the fixture folder is absent, after printing the one notice saying what `what` skips (a
 * plain clone has no `../shared`).
 */
export const fixturesAbsent = (what: string): boolean => {
  if (fixturesAvailable) return false
  console.warn(`notice: ${fixturesDir} is absent; ${what} skipped`)
  return true
}

/** Absolute path of a captured fixture, e.g. `fixture("deepseek/text-stop-chat.sse")`. */
export const fixture = (name: string): string => `${fixturesDir}${name}`

/** A folder of wire fixtures (`<provider>/<name>.sse|.http` + `.expected.json`, listed in `INDEX.md`). */
export interface WireRoot {
  /** what test names call it: `corpus` or `captures` */
  readonly label: string
  readonly dir: string
}

/** The project's own wire-format corpus, `test/fixtures/wire/` (written by its `write.ts`). */
export const corpus: WireRoot = { label: "corpus", dir: fileURLToPath(new URL("../fixtures/wire/", import.meta.url)) }

/** The captured fixtures beside the repository ({@link fixturesDir}). */
export const captures: WireRoot = { label: "captures", dir: fixturesDir }

/**
 * The fixture folders a suite replays: the corpus, and the captures when present (when absent, the one
 * notice of {@link fixturesAbsent} naming `what`).
 */
export const wireRoots = (what: string): ReadonlyArray<WireRoot> => fixturesAbsent(what) ? [corpus] : [corpus, captures]

/** Absolute path of a fixture in a folder, e.g. `inRoot(corpus, "deepseek/text-stop.sse")`. */
export const inRoot = (root: WireRoot, name: string): string => `${root.dir}${name}`

/** An `.sse` fixture as an SSE reply. */
export const sseFile = (path: string, options: { readonly seed?: number; readonly maxPiece?: number } = {}): Reply =>
  sse(readFileSync(path), options)

/** An `.http` fixture as a full-response reply. */
export const httpFile = (path: string): Reply => http(readFileSync(path))

// mulberry32: a tiny seeded PRNG, so piece sizes are reproducible
const prng = (seed: number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6D2B79F5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const nextTick = () => new Promise<void>((resolve) => setImmediate(resolve))

const writePieces = async (res: Http.ServerResponse, body: Uint8Array, seed: number, maxPiece: number) => {
  const random = prng(seed)
  let offset = 0
  while (offset < body.length) {
    if (res.destroyed) return
    const size = 1 + Math.floor(random() * maxPiece)
    res.write(body.subarray(offset, offset + size))
    offset += size
    await nextTick()
  }
}

interface Waiter<A> {
  readonly promise: Promise<A>
  readonly resolve: (a: A) => void
}

const waiter = <A>(): Waiter<A> => {
  let resolve!: (a: A) => void
  const promise = new Promise<A>((r) => (resolve = r))
  return { promise, resolve }
}

/** Starts a fake provider on `127.0.0.1:0`; closed (all connections destroyed) with the Scope. */
export const make = (
  options: { readonly replies?: ReadonlyArray<Reply> } = {}
): Effect.Effect<FakeProvider, never, Scope.Scope> =>
  Effect.gen(function*() {
    const queue: Array<Reply> = [...(options.replies ?? [])]
    const recorded: Array<RecordedRequest> = []
    const closes: Array<Waiter<{ readonly early: boolean }>> = []
    const closeAt = (i: number) => (closes[i] ??= waiter())
    let requestWaiters: Array<{ readonly n: number; readonly resolve: () => void }> = []

    const handle = (req: Http.IncomingMessage, res: Http.ServerResponse) => {
      const parts: Array<Buffer> = []
      req.on("data", (b: Buffer) => parts.push(b))
      req.on("end", () => {
        const rawBody = Buffer.concat(parts).toString("utf8")
        let body: unknown = undefined
        try {
          body = JSON.parse(rawBody)
        } catch {
          body = undefined
        }
        const headers: Record<string, string> = {}
        for (const [k, v] of Object.entries(req.headers)) {
          if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(", ") : v
        }
        const index = recorded.length
        recorded.push({ method: req.method ?? "", path: req.url ?? "", headers, rawBody, body, remotePort: req.socket.remotePort ?? 0 })
        res.on("close", () => closeAt(index).resolve({ early: !res.writableFinished }))
        const ready = requestWaiters.filter((w) => recorded.length >= w.n)
        requestWaiters = requestWaiters.filter((w) => recorded.length < w.n)
        for (const w of ready) w.resolve()
        const reply = queue.shift()
        if (reply === undefined) {
          res.writeHead(500, { "content-type": "application/json" })
          res.end(JSON.stringify({ error: { message: "no reply scripted" } }))
          return
        }
        switch (reply._tag) {
          case "Sse": {
            res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", ...reply.headers })
            res.flushHeaders()
            void writePieces(res, reply.body, reply.seed, reply.maxPiece).then(() => res.end())
            return
          }
          case "Http": {
            res.writeHead(reply.status, reply.reason === "" ? undefined : reply.reason, reply.headers)
            res.end(reply.body)
            return
          }
          case "Timed": {
            res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", ...reply.headers })
            res.flushHeaders()
            void (async () => {
              for (const step of reply.steps) {
                if (res.destroyed) return
                if (typeof step === "number") await new Promise((resolve) => setTimeout(resolve, step))
                else res.write(step)
              }
              if (reply.end && !res.destroyed) res.end()
            })()
            return
          }
          case "Stall":
            return
          case "StallMidBody": {
            res.writeHead(200, { "content-type": "text/event-stream" })
            res.write(reply.body.subarray(0, reply.after))
            return
          }
          case "Drop": {
            res.writeHead(200, { "content-type": "text/event-stream" })
            res.write(reply.body.subarray(0, reply.after), () => {
              setImmediate(() => res.socket?.destroy())
            })
            return
          }
        }
      })
    }

    const server = yield* Effect.acquireRelease(
      Effect.callback<Http.Server>((resume) => {
        const server = Http.createServer(handle)
        server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
      }),
      (server) =>
        Effect.callback<void>((resume) => {
          server.closeAllConnections()
          server.close(() => resume(Effect.void))
        })
    )
    const port = (server.address() as AddressInfo).port

    return {
      url: `http://127.0.0.1:${port}`,
      enqueue: (...replies) => Effect.sync(() => void queue.push(...replies)),
      requests: Effect.sync(() => recorded.slice()),
      awaitRequests: (n) =>
        Effect.promise(() =>
          recorded.length >= n ? Promise.resolve() : new Promise<void>((resolve) => {
            requestWaiters.push({ n, resolve })
          })
        ).pipe(Effect.map(() => recorded.slice())),
      awaitClose: (i) => Effect.promise(() => closeAt(i).promise)
    } satisfies FakeProvider
  })
