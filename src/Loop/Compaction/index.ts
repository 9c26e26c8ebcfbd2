/**
 * Context compaction (K-1..K-15): pressure, region, cheap pass, cited summaries, the recall tool,
 * and the rebuilding of summary requests from the log. The runner and its triggers work over the
 * agent's internal runtime and are not exported here.
 *
 * @since 0.1.0
 */
export * as Estimate from "./Estimate.js"
export * as Options from "./Options.js"
export * as Pressure from "./Pressure.js"
export * as Recall from "./Recall.js"
export * as Reconstruct from "./Reconstruct.js"
export * as Region from "./Region.js"
export * as Summary from "./Summary.js"
