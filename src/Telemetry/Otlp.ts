/**
 * OTLP/HTTP export of the harness's traces, metrics and logs (issue 19), over Effect's own OTLP exporter
 * (`effect/observability/Otlp`: no OpenTelemetry SDK needed at run time). Embedders provide {@link layer} next to
 * their agents; the CLI provides it from the standard `OTEL_*` variables ({@link Config}).
 *
 * @since 0.1.0
 */
import * as Otlp from "effect/observability/Otlp"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import packageJson from "../../package.json" with { type: "json" }

/**
 * What the export needs.
 *
 * @since 0.1.0
 * @category models
 */
export interface ExportOptions {
  readonly endpoint: string
  readonly protocol: "http/protobuf" | "http/json"
  readonly headers: Readonly<Record<string, Redacted.Redacted>>
  readonly serviceName: string
  readonly captureContent: boolean
}

/**
 * The export Layer: spans, metrics and logs to `<endpoint>/v1/{traces,metrics,logs}`, JSON or protobuf, flushed
 * when the Layer's scope closes. Header values (often keys) are used on the wire only, never logged.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: ExportOptions): Layer.Layer<never> => {
  const settings = {
    baseUrl: options.endpoint,
    resource: { serviceName: options.serviceName, serviceVersion: packageJson.version },
    headers: Object.fromEntries(Object.entries(options.headers).map(([k, v]) => [k, Redacted.value(v)])),
    shutdownTimeout: "5 seconds" as const
  }
  return (options.protocol === "http/json" ? Otlp.layerJson(settings) : Otlp.layerProtobuf(settings)).pipe(
    Layer.provide(FetchHttpClient.layer)
  )
}
