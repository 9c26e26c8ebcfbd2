/**
 * The typed failures of the MCP client, one class per canonical code:
 *
 * | class | code | when |
 * |---|---|---|
 * | {@link McpConnectError} | `MCP_CONNECT_FAILED` | the server cannot be started, reached or initialised, or it is down |
 * | {@link McpTimeoutError} | `MCP_TIMEOUT` | `initialize` or a call did not answer in time |
 * | {@link McpServerError} | `MCP_SERVER_ERROR` | the server answered with a JSON-RPC error, or a tool result with `isError` |
 * | {@link McpProtocolError} | `MCP_PROTOCOL_ERROR` | the answer broke the protocol (bad shape, unknown tool, transport error) |
 *
 * Every class carries the server's configured name; `message` is one line in the user's words. A
 * tool body failing with one of them becomes an error result `{name: _tag, code}` (T-6).
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

const fields = {
  server: Schema.String,
  message: Schema.String,
  cause: Schema.optionalKey(Schema.Defect())
}

/**
 * The server could not be started, reached or initialised (or is reported down).
 *
 * @since 0.1.0
 * @category errors
 */
export class McpConnectError extends Schema.TaggedError<McpConnectError>()("McpConnectError", fields) {
  /** Stable code. */
  readonly code = "MCP_CONNECT_FAILED" as const
}

/**
 * `initialize` or a request did not answer within its deadline.
 *
 * @since 0.1.0
 * @category errors
 */
export class McpTimeoutError extends Schema.TaggedError<McpTimeoutError>()("McpTimeoutError", fields) {
  /** Stable code. */
  readonly code = "MCP_TIMEOUT" as const
}

/**
 * The server reported an error (a JSON-RPC error response, or a tool result flagged `isError`).
 *
 * @since 0.1.0
 * @category errors
 */
export class McpServerError extends Schema.TaggedError<McpServerError>()("McpServerError", fields) {
  /** Stable code. */
  readonly code = "MCP_SERVER_ERROR" as const
}

/**
 * The server's answer broke the protocol (or the transport failed mid-exchange).
 *
 * @since 0.1.0
 * @category errors
 */
export class McpProtocolError extends Schema.TaggedError<McpProtocolError>()("McpProtocolError", fields) {
  /** Stable code. */
  readonly code = "MCP_PROTOCOL_ERROR" as const
}

/**
 * Any MCP client failure.
 *
 * @since 0.1.0
 * @category errors
 */
export type McpError = McpConnectError | McpTimeoutError | McpServerError | McpProtocolError
