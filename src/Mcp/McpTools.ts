/**
 * Loop tools from one MCP server's `tools/list`.
 *
 * {@link fromListing} turns a listing into loop tools (`Tool.raw`) plus the tools it had to skip,
 * each with a one-line reason: a definition the SDK's schema rejects (`ToolListing`, issue 26: only
 * that tool is dropped, not the server), a provider-hostile schema that cannot be normalised
 * (`ToolSchema.normalize`), a schema Ajv cannot compile, a task-only tool (`execution.taskSupport:
 * "required"`; this client does not run tasks), or a name collision (`ToolName.assign`).
 *
 * A tool's body validates the arguments against the schema the model was shown (`INVALID_ARGS`,
 * T-10 style), calls the server, and maps the result (`ToolResult`); a result flagged `isError`
 * fails with `MCP_SERVER_ERROR` carrying the server's text, which the pipeline turns into an error
 * result the model reads. The result's `meta` names the server and the tool (`{mcp: {server,
 * tool}}`) so the log says where a result came from.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type * as Json from "../Llm/Json.js"
import * as Tool from "../Loop/Tool.js"
import type * as McpConnection from "./McpConnection.js"
import { McpServerError } from "./McpError.js"
import * as ToolListing from "./ToolListing.js"
import * as ToolName from "./ToolName.js"
import * as ToolResult from "./ToolResult.js"
import * as ToolSchema from "./ToolSchema.js"

/**
 * A tool offered to the model.
 *
 * @since 0.1.0
 * @category models
 */
export interface Offered {
  /** the loop name, `mcp__<server>__<tool>` */
  readonly name: string
  /** the server's name for it */
  readonly tool: string
  readonly loopTool: Tool.Tool<never>
}

/**
 * A tool not offered, and why (one line).
 *
 * @since 0.1.0
 * @category models
 */
export interface Skipped {
  readonly tool: string
  readonly reason: string
}

/**
 * The `_meta` field of a `tools/call` request that carries the call's idempotency key (DEC-16).
 *
 * @since 0.1.0
 * @category constants
 */
export const idempotencyMetaKey = "effect-harness/idempotencyKey"

/**
 * Builds the loop tools of a listing. `reserved` are loop names already taken (other servers'
 * tools, built-in tools).
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromListing = (
  connection: McpConnection.Connection,
  listing: ReadonlyArray<ToolListing.ListedTool>,
  reserved: ReadonlySet<string>
): { readonly offered: ReadonlyArray<Offered>; readonly skipped: ReadonlyArray<Skipped> } => {
  const server = connection.name
  const skipped: Array<Skipped> = []
  const usable: Array<{
    readonly server: string
    readonly tool: string
    readonly description: string
    readonly parameters: Json.JsonObject
    readonly validate: ToolSchema.Validator
    readonly effects: Tool.Effects
  }> = []
  for (const t of listing) {
    if (ToolListing.isMalformed(t)) {
      skipped.push({ tool: t.name, reason: t.malformed })
      continue
    }
    if (t.execution?.taskSupport === "required") {
      skipped.push({ tool: t.name, reason: "it runs only as an MCP task, which this client does not support" })
      continue
    }
    const schema = ToolSchema.normalize(t.inputSchema)
    if (Result.isFailure(schema)) {
      skipped.push({ tool: t.name, reason: schema.failure })
      continue
    }
    const validate = ToolSchema.validator(schema.success)
    if (Result.isFailure(validate)) {
      skipped.push({ tool: t.name, reason: validate.failure })
      continue
    }
    usable.push({
      server,
      tool: t.name,
      description: t.description ?? t.title ?? "",
      parameters: schema.success,
      validate: validate.success,
      // DEC-16: a call left in doubt by a crash runs again only for a read-only or idempotent tool
      effects: t.annotations?.readOnlyHint === true
        ? "read-only"
        : t.annotations?.idempotentHint === true
        ? "idempotent"
        : "side-effecting"
    })
  }
  const { collisions, named } = ToolName.assign(usable, reserved)
  for (const c of collisions) skipped.push({ tool: c.tool, reason: `its name ${c.name} collides with ${c.with}` })
  const offered = named.map((u): Offered => ({
    name: u.name,
    tool: u.tool,
    loopTool: Tool.raw({
      name: u.name,
      description: u.description,
      parameters: u.parameters,
      effects: u.effects,
      execute: (args, context) =>
        Effect.gen(function*() {
          const violations = u.validate(args)
          if (violations.length > 0) return yield* Tool.argsError(violations)
          const result = yield* connection.callTool(u.tool, args as Readonly<Record<string, unknown>>, {
            meta: { [idempotencyMetaKey]: context.idempotencyKey }
          })
          const meta = { mcp: { server, tool: u.tool } }
          if (result.isError === true) {
            const text = ToolResult.toText(result)
            return yield* new McpServerError({ server, message: text === "" ? `tool "${u.tool}" failed` : text })
          }
          return { content: ToolResult.toContent(result), meta }
        })
    })
  }))
  return { offered, skipped }
}
