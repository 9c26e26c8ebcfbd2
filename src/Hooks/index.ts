/**
 * The Claude-Code-compatible command hooks of the settings files: the bridge that runs them at the loop's
 * interception points, their matcher, process and outcome.
 *
 * @since 0.1.0
 */
export * as HookBridge from "./Bridge.js"
export * as HookMatcher from "./Matcher.js"
export * as HookOutcome from "./HookOutcome.js"
export * as HookProcess from "./HookProcess.js"
