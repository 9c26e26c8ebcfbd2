/**
 * Telemetry configuration from the standard OpenTelemetry environment variables (issue 19), without loading the
 * exporter: {@link layerFromEnv} imports `./Otlp.js` only when `OTEL_EXPORTER_OTLP_ENDPOINT` is set, so the CLI's
 * cold start and network behaviour are unchanged otherwise (no connection is ever opened).
 *
 * Read: `OTEL_EXPORTER_OTLP_ENDPOINT` (base URL), `OTEL_EXPORTER_OTLP_PROTOCOL` (`http/protobuf`, the
 * specification's default, or `http/json`), `OTEL_EXPORTER_OTLP_HEADERS` (`k=v,k2=v2`, values percent-decoded,
 * kept `Redacted`), `OTEL_SERVICE_NAME` (default `effect-harness`), `OTEL_SDK_DISABLED=true` (off), and
 * `EFFECT_HARNESS_OTEL_CAPTURE_CONTENT=true` (attach message content to spans: opt-in).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as GenAi from "../Llm/GenAi.js"
import type { ExportOptions } from "./Otlp.js"

/**
 * What the export needs (defined beside the exporter, `Otlp.ts`; a type import, so the exporter is still
 * loaded only when an endpoint is set).
 *
 * @since 0.1.0
 * @category models
 */
export type { ExportOptions } from "./Otlp.js"

const parseHeaders = (raw: string | undefined): Record<string, Redacted.Redacted> => {
  const out: Record<string, Redacted.Redacted> = {}
  for (const pair of (raw ?? "").split(",")) {
    const at = pair.indexOf("=")
    if (at <= 0) continue
    const key = pair.slice(0, at).trim()
    const value = pair.slice(at + 1).trim()
    try {
      out[key] = Redacted.make(decodeURIComponent(value))
    } catch {
      out[key] = Redacted.make(value)
    }
  }
  return out
}

/**
 * The export options the environment asks for, or `undefined` when telemetry is not configured.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromEnv = (env: Readonly<Record<string, string | undefined>>): ExportOptions | undefined => {
  const endpoint = env["OTEL_EXPORTER_OTLP_ENDPOINT"]?.trim()
  if (endpoint === undefined || endpoint === "" || env["OTEL_SDK_DISABLED"]?.toLowerCase() === "true") return undefined
  return {
    endpoint: endpoint.replace(/\/+$/, ""),
    protocol: env["OTEL_EXPORTER_OTLP_PROTOCOL"] === "http/json" ? "http/json" : "http/protobuf",
    headers: parseHeaders(env["OTEL_EXPORTER_OTLP_HEADERS"]),
    serviceName: env["OTEL_SERVICE_NAME"]?.trim() || "effect-harness",
    captureContent: env["EFFECT_HARNESS_OTEL_CAPTURE_CONTENT"]?.toLowerCase() === "true"
  }
}

/**
 * The export Layer the environment asks for, or an empty Layer. The exporter module is imported only when needed.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFromEnv = (env: Readonly<Record<string, string | undefined>>): Layer.Layer<never> => {
  const options = fromEnv(env)
  if (options === undefined) return Layer.empty
  const exporter = Layer.unwrap(Effect.map(Effect.promise(() => import("./Otlp.js")), (m) => m.layer(options)))
  return options.captureContent ? Layer.merge(exporter, Layer.succeed(GenAi.CaptureContent, true)) : exporter
}
