/**
 * Session events as Agent Client Protocol `session/update` payloads. The log stays the source of
 * truth: everything an editor sees is derived from logged events, live (as they are appended) or
 * replayed (`session/load`).
 *
 * - `assistant/chunk` text and reasoning deltas → `agent_message_chunk` / `agent_thought_chunk`;
 * - `tool/call` → `tool_call` (`pending`, a title, a kind, the parsed `rawInput`, the file it
 *   touches as a location, and for `edit` / `write` a `diff` of the change);
 * - `tool/result` → `tool_call_update` (`completed` or `failed`, the result text);
 * - on replay, `user/message` and `steering/message` → `user_message_chunk`, and an
 *   `assistant/message` (whose chunks a replay does not resend) → its text and reasoning chunks.
 *
 * @since 0.1.0
 */
import type * as Acp from "@agentclientprotocol/sdk"
import type * as ContentBlock from "../Llm/ContentBlock.js"
import type * as SessionEvent from "../Session/SessionEvent.js"

/**
 * An ACP tool kind for one of the built-in tools (`other` for the rest).
 *
 * @since 0.1.0
 * @category utils
 */
export const kindOf = (name: string): Acp.ToolKind => {
  switch (name) {
    case "read":
      return "read"
    case "write":
    case "edit":
      return "edit"
    case "bash":
      return "execute"
    case "ls":
    case "glob":
    case "grep":
      return "search"
    case "recall":
      return "think"
    default:
      return "other"
  }
}

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

const stringField = (args: unknown, key: string): string | undefined => {
  if (typeof args !== "object" || args === null || !(key in args)) return undefined
  const v: unknown = (args as Readonly<Record<string, unknown>>)[key]
  return typeof v === "string" ? v : undefined
}

/**
 * The `tool_call` fields of a call: title, kind, raw input, locations and (edit, write) its diff.
 *
 * @since 0.1.0
 * @category utils
 */
export const describeCall = (callId: string, name: string, argumentsText: string): Acp.ToolCall => {
  const args = parse(argumentsText)
  const path = stringField(args, "file_path") ?? stringField(args, "path")
  const command = stringField(args, "command")
  const pattern = stringField(args, "pattern")
  const title = command !== undefined
    ? `${name}: ${command.split("\n")[0] ?? ""}`
    : path !== undefined
    ? `${name} ${path}`
    : pattern !== undefined
    ? `${name} ${pattern}`
    : name
  const oldText = stringField(args, "old_string")
  const newText = stringField(args, "new_string")
  const content = stringField(args, "content")
  const diff: ReadonlyArray<Acp.ToolCallContent> = path === undefined
    ? []
    : name === "edit" && oldText !== undefined && newText !== undefined
    ? [{ type: "diff", path, oldText, newText }]
    : name === "write" && content !== undefined
    ? [{ type: "diff", path, oldText: null, newText: content }]
    : []
  return {
    toolCallId: callId,
    title: title.length > 200 ? `${title.slice(0, 199)}…` : title,
    kind: kindOf(name),
    status: "pending",
    rawInput: args,
    ...(diff.length === 0 ? {} : { content: [...diff] }),
    ...(path === undefined ? {} : { locations: [{ path }] })
  }
}

const textOf = (blocks: ReadonlyArray<ContentBlock.ContentBlock>): string =>
  blocks.map((b) => b.type === "text" ? b.text : b.type === "reasoning" ? "" : JSON.stringify(b)).join("")

const text = (t: string): Acp.ContentBlock => ({ type: "text", text: t })

const resultUpdate = (e: SessionEvent.EventOf<"tool/result">): Acp.SessionUpdate => ({
  sessionUpdate: "tool_call_update",
  toolCallId: e.data.callId,
  status: e.data.isError ? "failed" : "completed",
  content: [{ type: "content", content: text(textOf(e.data.content)) }],
  _meta: { seq: e.seq }
})

/**
 * The updates an event makes while a prompt runs (none for bookkeeping events).
 *
 * @since 0.1.0
 * @category utils
 */
export const live = (e: SessionEvent.SessionEvent): ReadonlyArray<Acp.SessionUpdate> => {
  switch (e.type) {
    case "assistant/chunk": {
      const chunk = e.data.chunk
      if (chunk.type === "text-delta") return [{ sessionUpdate: "agent_message_chunk", content: text(chunk.text) }]
      if (chunk.type === "reasoning-delta") return [{ sessionUpdate: "agent_thought_chunk", content: text(chunk.text) }]
      return []
    }
    case "tool/call":
      return [{ sessionUpdate: "tool_call", ...describeCall(e.data.callId, e.data.name, e.data.arguments), _meta: { seq: e.seq } }]
    case "tool/result":
      return [resultUpdate(e)]
    default:
      return []
  }
}

/**
 * The updates that replay a stored session to an editor (`session/load`).
 *
 * @since 0.1.0
 * @category utils
 */
export const replay = (events: ReadonlyArray<SessionEvent.SessionEvent>): ReadonlyArray<Acp.SessionUpdate> =>
  events.flatMap((e): ReadonlyArray<Acp.SessionUpdate> => {
    switch (e.type) {
      case "user/message":
      case "steering/message":
        return [{ sessionUpdate: "user_message_chunk", content: text(textOf(e.data.content)), _meta: { seq: e.seq } }]
      case "assistant/message": {
        const thought = e.data.content.filter((b) => b.type === "reasoning").map((b) => b.text).join("")
        const said = e.data.content.filter((b) => b.type === "text").map((b) => b.text).join("")
        return [
          ...(thought === "" ? [] : [{ sessionUpdate: "agent_thought_chunk" as const, content: text(thought), _meta: { seq: e.seq } }]),
          ...(said === "" ? [] : [{ sessionUpdate: "agent_message_chunk" as const, content: text(said), _meta: { seq: e.seq } }])
        ]
      }
      case "tool/call":
      case "tool/result":
        return live(e)
      default:
        return []
    }
  })

/**
 * The prompt's text from ACP content blocks (text as is; a resource's text with its URI; links as
 * their URI; images and audio are not supported and named).
 *
 * @since 0.1.0
 * @category utils
 */
export const promptText = (blocks: ReadonlyArray<Acp.ContentBlock>): string =>
  blocks.map((b) => {
    switch (b.type) {
      case "text":
        return b.text
      case "resource_link":
        return `[${b.name}](${b.uri})`
      case "resource":
        return "text" in b.resource ? `<resource uri="${b.resource.uri}">\n${b.resource.text}\n</resource>` : `[resource ${b.resource.uri}]`
      default:
        return `[${b.type} content is not supported]`
    }
  }).join("\n")
