/**
 * The offline demo model: the keyless scripted adapter playing a built-in script, used when no API
 * key is configured. It behaves like a tiny agent so the whole loop shows on a fresh machine:
 * it streams a short answer with a line of reasoning, calls the read-only built-in `ls` tool on the
 * workspace, reads the tool result from the next request and summarizes it. Every turn repeats the
 * same two steps; it never needs the network.
 *
 * @since 0.1.0
 */
import * as Scripted from "../Adapter/Scripted.js"
import * as ContentBlock from "../Llm/ContentBlock.js"
import type * as Message from "../Llm/Message.js"

/**
 * The route and model the demo serves.
 *
 * @since 0.1.0
 * @category constants
 */
export const provider = "scripted"

const lastToolResult = (request: Message.GenerateOptions): ContentBlock.ToolResultBlock | undefined => {
  const last = request.messages[request.messages.length - 1]
  if (last === undefined || last.role !== "user") return undefined
  for (const block of last.content) if (block.type === "tool-result") return block
  return undefined
}

const lastPrompt = (request: Message.GenerateOptions): string => {
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const m = request.messages[i]
    if (m !== undefined && m.role === "user") {
      const text = ContentBlock.flattenText(m.content).trim()
      if (text !== "" && !text.startsWith("<system-reminder>")) return text
    }
  }
  return ""
}

/**
 * The demo's answer to one request: either a tool call (first step of a turn) or a summary of the
 * tool result (second step).
 *
 * @since 0.1.0
 * @category constructors
 */
export const respond = (request: Message.GenerateOptions, call: number): Scripted.Reply => {
  const result = lastToolResult(request)
  if (result === undefined) {
    const prompt = lastPrompt(request)
    const quoted = prompt.length > 60 ? `${prompt.slice(0, 57)}...` : prompt
    return [
      Scripted.think("No API key is configured, so I am the built-in offline demo model."),
      Scripted.say(
        `Hello! I am effect-harness's offline demo model (set DEEPSEEK_API_KEY, ANTHROPIC_API_KEY or OPENAI_API_KEY for a real one). ` +
          `You asked: "${quoted}". Let me look at your workspace with the ls tool.`
      ),
      Scripted.toolCall(`demo-call-${call}`, "ls", "{}"),
      Scripted.usage(40 + prompt.length, 48),
      Scripted.finish("tool-calls")
    ]
  }
  const listing = ContentBlock.flattenText(result.content)
  const entries = listing.split("\n").filter((line) => line.trim() !== "")
  const summary = result.isError === true
    ? `The ls tool failed: ${listing}`
    : `Your workspace has ${entries.length} entr${entries.length === 1 ? "y" : "ies"}` +
      (entries.length > 0 ? `, for example: ${entries.slice(0, 5).join(", ")}.` : ".")
  return [
    Scripted.say(`${summary} That was a complete agent turn: streamed text, a tool call, its result, and this answer.`),
    Scripted.usage(120, 30),
    Scripted.finish("stop")
  ]
}

/**
 * An (effectively endless) script answering every request with {@link respond}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const script = (turns = 10_000): Scripted.Script => Array.from({ length: turns * 2 }, () => respond)
