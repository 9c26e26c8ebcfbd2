/**
 * Session exports: pure functions from a session's header and events to a self-contained HTML
 * page, an ATIF trajectory (Harbor's Agent Trajectory Interchange Format) and normalized JSON Lines.
 * Every exported record names the log events it comes from.
 *
 * @since 0.1.0
 */
export * as Atif from "./Atif.js"
export * as Html from "./Html.js"
export * as NormalizedJsonl from "./NormalizedJsonl.js"
export * as Timeline from "./Timeline.js"
