/**
 * Permission rules and modes (Claude Code's `permissions` settings), the shell-command analysis they rely
 * on, and approval as a service whose prompt the host supplies (`ToolApproval`; the loop's own approval
 * point is `Approval`).
 *
 * @since 0.1.0
 */
export * as PermissionRule from "./PermissionRule.js"
export * as Permissions from "./Permissions.js"
export * as ShellCommand from "./ShellCommand.js"
export * as ShellParser from "./ShellParser.js"
export * as ToolApproval from "./Approval.js"
