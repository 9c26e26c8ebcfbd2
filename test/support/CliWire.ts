/**
 * Streamed provider answers for the CLI end-to-end tests, built per request (a tool call, then a
 * final text) in the three wire formats the fake provider serves: OpenAI-compatible chat
 * completions as DeepSeek sends them (usage with `prompt_cache_hit_tokens`, on the finish chunk),
 * as a generic OpenAI-compatible server sends them (usage in a final `choices: []` chunk with
 * `prompt_tokens_details.cached_tokens`), and Anthropic Messages SSE. The framing follows the
 * captured fixtures in `../shared/fixtures/wire/`.
 */

/** The wire formats. */
export type Wire = "deepseek" | "openai-compatible" | "anthropic"

/** Token usage a fake answer reports (`input` excludes cache reads). */
export interface FakeUsage {
  readonly input: number
  readonly output: number
  readonly cacheRead: number
}

const pieces = (text: string, size: number): Array<string> => {
  const out: Array<string> = []
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size))
  return out
}

const openAiUsage = (wire: "deepseek" | "openai-compatible", usage: FakeUsage) =>
  wire === "deepseek"
    ? {
      prompt_tokens: usage.input + usage.cacheRead,
      completion_tokens: usage.output,
      total_tokens: usage.input + usage.cacheRead + usage.output,
      prompt_cache_hit_tokens: usage.cacheRead,
      prompt_cache_miss_tokens: usage.input
    }
    : {
      prompt_tokens: usage.input + usage.cacheRead,
      completion_tokens: usage.output,
      total_tokens: usage.input + usage.cacheRead + usage.output,
      prompt_tokens_details: { cached_tokens: usage.cacheRead }
    }

const openAiStream = (
  wire: "deepseek" | "openai-compatible",
  deltas: ReadonlyArray<Record<string, unknown>>,
  finish: string,
  usage: FakeUsage
): string => {
  const model = wire === "deepseek" ? "deepseek-v4-flash" : "m"
  const frame = (delta: Record<string, unknown>, finishReason: string | null, extra: Record<string, unknown> = {}) =>
    `data: ${
      JSON.stringify({
        id: "chatcmpl-e2e",
        object: "chat.completion.chunk",
        created: 1_764_664_568,
        model,
        choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
        ...extra
      })
    }\n\n`
  let body = frame({ role: "assistant", content: "" }, null)
  for (const d of deltas) body += frame(d, null)
  if (wire === "deepseek") {
    body += frame({ content: "" }, finish, { usage: openAiUsage(wire, usage) })
  } else {
    body += frame({}, finish)
    body += `data: ${
      JSON.stringify({
        id: "chatcmpl-e2e",
        object: "chat.completion.chunk",
        created: 1_764_664_568,
        model,
        choices: [],
        usage: openAiUsage(wire, usage)
      })
    }\n\n`
  }
  return `${body}data: [DONE]\n\n`
}

const anthropicEvent = (type: string, data: Record<string, unknown>) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`

const anthropicStream = (
  blocks: ReadonlyArray<{ readonly start: Record<string, unknown>; readonly deltas: ReadonlyArray<Record<string, unknown>> }>,
  stopReason: string,
  usage: FakeUsage
): string => {
  let body = anthropicEvent("message_start", {
    message: {
      model: "claude-sonnet-4-5-20250929",
      id: "msg_e2e",
      type: "message",
      role: "assistant",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: usage.input,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: usage.cacheRead,
        output_tokens: 1
      }
    }
  })
  blocks.forEach((block, index) => {
    body += anthropicEvent("content_block_start", { index, content_block: block.start })
    for (const delta of block.deltas) body += anthropicEvent("content_block_delta", { index, delta })
    body += anthropicEvent("content_block_stop", { index })
  })
  body += anthropicEvent("message_delta", {
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: { output_tokens: usage.output }
  })
  return body + anthropicEvent("message_stop", {})
}

/** A streamed answer: some text, then one tool call with `args` (JSON text split in pieces). */
export const toolCall = (
  wire: Wire,
  call: { readonly id: string; readonly name: string; readonly args: string; readonly text: string },
  usage: FakeUsage
): string => {
  if (wire === "anthropic") {
    return anthropicStream(
      [
        { start: { type: "text", text: "" }, deltas: pieces(call.text, 7).map((text) => ({ type: "text_delta", text })) },
        {
          start: { type: "tool_use", id: call.id, name: call.name, input: {} },
          deltas: pieces(call.args, 9).map((partial_json) => ({ type: "input_json_delta", partial_json }))
        }
      ],
      "tool_use",
      usage
    )
  }
  return openAiStream(
    wire,
    [
      ...pieces(call.text, 7).map((content) => ({ content })),
      { tool_calls: [{ index: 0, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] },
      ...pieces(call.args, 9).map((args) => ({ tool_calls: [{ index: 0, function: { arguments: args } }] }))
    ],
    "tool_calls",
    usage
  )
}

/** A streamed final text answer. */
export const text = (wire: Wire, answer: string, usage: FakeUsage): string =>
  wire === "anthropic"
    ? anthropicStream(
      [{ start: { type: "text", text: "" }, deltas: pieces(answer, 5).map((text) => ({ type: "text_delta", text })) }],
      "end_turn",
      usage
    )
    : openAiStream(wire, pieces(answer, 5).map((content) => ({ content })), "stop", usage)
