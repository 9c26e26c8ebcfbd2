/**
 * Telemetry export: OTLP Layers for the GenAI spans and metrics the loop emits (`Llm/GenAi.ts`).
 *
 * @since 0.1.0
 */
export * as Config from "./Config.js"
export * as Otlp from "./Otlp.js"
