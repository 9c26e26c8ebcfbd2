/**
 * `harness run --input-format stream-json`: the prompts come from stdin as JSON Lines in Claude
 * Code's stream-json input format, one user message per line:
 *
 * ```json
 * {"type":"user","message":{"role":"user","content":[{"type":"text","text":"…"}]}}
 * ```
 *
 * `content` is a string or a list of `text` blocks; `session_id` and `parent_tool_use_id` are
 * accepted and ignored (the session is chosen with `--resume` / `--continue`). A line while the
 * agent is idle starts a turn; a line while a turn runs steers it (logged as `steering/message` at
 * the turn's next drain point). Blank lines are skipped. The run ends when stdin ends and the last
 * turn has finished; the output (`--output-format`) is unchanged. Stdin that ends before any message
 * is a usage error (exit 2), like an empty prompt.
 *
 * A line that is not such a message (not JSON, another `type`, an image block, …) is an error
 * naming the line: nothing after it is read, the running turn still finishes and is saved, then the
 * run exits 2.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as NodeReadline from "node:readline"
import * as ContentBlock from "../Llm/ContentBlock.js"
import type * as Agent from "../Loop/Agent.js"
import { CliError } from "./CliError.js"
import { ExitCode } from "./ExitCode.js"

const TextPart = Schema.Struct({ type: Schema.Literal("text"), text: Schema.String })

/**
 * One stream-json input line (a user message).
 *
 * @since 0.1.0
 * @category schemas
 */
export const UserLine = Schema.Struct({
  type: Schema.Literal("user"),
  message: Schema.Struct({
    role: Schema.Literal("user"),
    content: Schema.Union([Schema.String, Schema.Array(TextPart)])
  }),
  session_id: Schema.optionalKey(Schema.NullOr(Schema.String)),
  parent_tool_use_id: Schema.optionalKey(Schema.NullOr(Schema.String))
})

const decode = Schema.decodeUnknownResult(UserLine)

/**
 * The content of one line, or why it is not a stream-json user message.
 *
 * @since 0.1.0
 * @category utils
 */
export const decodeLine = (line: string): Result.Result<ReadonlyArray<ContentBlock.ContentBlock>, string> => {
  let json: unknown
  try {
    json = JSON.parse(line)
  } catch {
    return Result.fail("it is not JSON")
  }
  const decoded = decode(json)
  if (Result.isFailure(decoded)) {
    const type = typeof json === "object" && json !== null && "type" in json ? json.type : undefined
    return Result.fail(
      type !== "user"
        ? `its type is ${JSON.stringify(type)}; only {"type":"user","message":{"role":"user","content":…}} is read`
        : "its message is not {\"role\":\"user\",\"content\": a string or text blocks}"
    )
  }
  const content = decoded.success.message.content
  return Result.succeed(typeof content === "string" ? [ContentBlock.text(content)] : content.map((p) => ContentBlock.text(p.text)))
}

type Item = { readonly _tag: "Line"; readonly text: string; readonly n: number } | { readonly _tag: "End" }

/**
 * Feeds the agent from `input` until it ends (see the module doc), then waits for the last turn.
 *
 * @since 0.1.0
 * @category utils
 */
export const drive = (agent: Agent.Agent, input: NodeJS.ReadableStream): Effect.Effect<void, CliError> =>
  Effect.scoped(Effect.gen(function*() {
    const items = yield* Queue.unbounded<Item>()
    yield* Effect.acquireRelease(
      Effect.sync(() => {
        let n = 0
        const rl = NodeReadline.createInterface({ input, terminal: false })
        rl.on("line", (text) => Queue.offerUnsafe(items, { _tag: "Line", text, n: ++n }))
        rl.on("close", () => Queue.offerUnsafe(items, { _tag: "End" }))
        return rl
      }),
      (rl) => Effect.sync(() => rl.close())
    )
    let sent = 0
    for (;;) {
      const item = yield* Queue.take(items)
      if (item._tag === "End") break
      if (item.text.trim() === "") continue
      const content = decodeLine(item.text)
      if (Result.isFailure(content)) {
        // what is running finishes and is saved before the run reports the line
        yield* agent.whenIdle
        return yield* new CliError({
          message: `error: stdin line ${item.n} is not a stream-json user message: ${content.failure}`,
          exitCode: ExitCode.Usage
        })
      }
      yield* agent.steer(content.success).pipe(
        Effect.mapError((e) => new CliError({ message: `error: stdin line ${item.n}: ${e.message}`, exitCode: ExitCode.Usage }))
      )
      sent++
    }
    if (sent === 0) {
      return yield* new CliError({ message: "error: stdin ended before any stream-json user message", exitCode: ExitCode.Usage })
    }
    yield* agent.whenIdle
  }))
