/**
 * Context compaction (K-1..K-15): pressure, region, cheap pass, cited summaries, the recall tool,
 * triggers and guards, and the rebuilding of summary requests from the log.
 *
 * @since 0.1.0
 */
export * as Compactor from "./Compactor.js"
export * as Estimate from "./Estimate.js"
export * as Options from "./Options.js"
export * as Pressure from "./Pressure.js"
export * as Recall from "./Recall.js"
export * as Reconstruct from "./Reconstruct.js"
export * as Region from "./Region.js"
export * as Summary from "./Summary.js"
export * as Trigger from "./Trigger.js"
