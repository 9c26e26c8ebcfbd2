/**
 * The Agent Client Protocol agent mode: an ACP agent (for Zed, JetBrains and other editors) over the
 * agent factory, its approval routing and the translation of session events into ACP updates.
 *
 * @since 0.1.0
 */
export * as AcpAgent from "./AcpAgent.js"
export * as AcpApprovals from "./AcpApprovals.js"
export * as AcpUpdates from "./AcpUpdates.js"
