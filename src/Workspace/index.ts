/**
 * The workspace an agent works in: settings files, the approval of the workspace's own configuration, the
 * home-directory check, workspace context (AGENTS.md / CLAUDE.md) and the directory of live agents.
 *
 * @since 0.1.0
 */
export * as AgentSessions from "./AgentSessions.js"
export * as HomeWorkspace from "./HomeWorkspace.js"
export * as Settings from "./Settings.js"
export * as SettingsFile from "./SettingsFile.js"
export * as WorkspaceContext from "./WorkspaceContext.js"
export * as WorkspaceTrust from "./WorkspaceTrust.js"
