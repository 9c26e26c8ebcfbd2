/**
 * The built-in coding tools and what they stand on: safe file access confined to the workspace, the bash
 * sandbox, secret scrubbing, terminal-safe text and the host's notice channel.
 *
 * @since 0.1.0
 */
export * as Bash from "./Bash.js"
export * as BuiltinTools from "./BuiltinTools.js"
export * as Edit from "./Edit.js"
export * as Glob from "./Glob.js"
export * as Grep from "./Grep.js"
export * as Ls from "./Ls.js"
export * as Notice from "./Notice.js"
export * as ProtectedPaths from "./ProtectedPaths.js"
export * as Read from "./Read.js"
export * as ReadFilter from "./ReadFilter.js"
export * as Sandbox from "./Sandbox.js"
export * as SecretEnv from "./SecretEnv.js"
export * as TerminalText from "./TerminalText.js"
export * as ToolError from "./ToolError.js"
export * as Workspace from "./Workspace.js"
export * as Write from "./Write.js"
