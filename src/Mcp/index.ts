/**
 * The MCP client: servers from `.mcp.json`, their tools in the loop's registry.
 *
 * @since 0.1.0
 */
export * as Mcp from "./Mcp.js"
export * as McpApproval from "./McpApproval.js"
export * as McpConfig from "./McpConfig.js"
export * as McpConnection from "./McpConnection.js"
export * as McpError from "./McpError.js"
export * as McpTools from "./McpTools.js"
export * as ToolName from "./ToolName.js"
export * as ToolResult from "./ToolResult.js"
export * as ToolSchema from "./ToolSchema.js"
export * as WorkspaceServers from "./WorkspaceServers.js"
