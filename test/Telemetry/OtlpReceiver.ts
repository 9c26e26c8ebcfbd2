/**
 * Test support: a loopback OTLP/HTTP receiver, and {@link traced}, which runs an effect under Effect's own OTLP
 * exporter (`effect/observability/Otlp`, OTLP/JSON) pointed at it and returns the spans the receiver got. No
 * OpenTelemetry SDK: the spans are read as a collector reads them.
 */
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Layer from "effect/Layer"
import * as Otlp from "effect/observability/Otlp"
import type * as Scope from "effect/Scope"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import * as OtlpDecode from "./OtlpDecode.js"

/** One request the receiver got. */
export interface Received {
  readonly path: string
  readonly contentType: string
  readonly body: Buffer
}

/** A running receiver. */
export interface Receiver {
  readonly url: string
  readonly received: ReadonlyArray<Received>
  readonly connections: { readonly count: number }
}

/** A local OTLP receiver recording every request (answering `200 {}`); closed with the scope. */
export const receiver: Effect.Effect<Receiver, never, Scope.Scope> = Effect.acquireRelease(
  Effect.callback<Receiver & { readonly close: () => void }>((resume) => {
    const received: Array<Received> = []
    const connections = { count: 0 }
    const server = createServer((req, res) => {
      const parts: Array<Buffer> = []
      req.on("data", (b: Buffer) => parts.push(b))
      req.on("end", () => {
        received.push({ path: req.url ?? "", contentType: String(req.headers["content-type"]), body: Buffer.concat(parts) })
        res.writeHead(200, { "content-type": "application/json" }).end("{}")
      })
    })
    server.on("connection", () => connections.count++)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resume(Effect.succeed({ url: `http://127.0.0.1:${port}`, received, connections, close: () => server.close() }))
    })
  }),
  (r) => Effect.sync(r.close)
)

/** The spans of every OTLP/JSON trace export the receiver got. */
export const jsonSpans = (r: Receiver): Array<OtlpDecode.DecodedSpan> =>
  r.received.filter((x) => x.path === "/v1/traces").flatMap((x) => OtlpDecode.jsonSpans(x.body))

/**
 * Runs `effect` under the OTLP/JSON exporter sending to a fresh loopback receiver; returns its value and the spans
 * received once the exporter's layer closed (closing flushes every finished span).
 */
export const traced = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  serviceName: string
): Effect.Effect<{ readonly value: A; readonly spans: ReadonlyArray<OtlpDecode.DecodedSpan> }, E, Exclude<R, Scope.Scope>> =>
  Effect.scoped(Effect.gen(function*() {
    const otlp = yield* receiver
    const exporter = Otlp.layerJson({ baseUrl: otlp.url, resource: { serviceName } }).pipe(
      Layer.provide(FetchHttpClient.layer)
    )
    const value = yield* Effect.provide(effect, exporter, { local: true })
    return { value, spans: jsonSpans(otlp) }
  }))
