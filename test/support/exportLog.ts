/**
 * A two-turn session log for the export tests, full of hostile strings: markup, scripts, external
 * URLs (images, stylesheets, iframes) in the user's prompt, the model's reasoning and text, tool
 * arguments and results, and the title. An export that does not escape one of them adds markup or
 * makes a browser fetch something.
 */
import type { SessionId } from "../../src/Llm/Message.js"
import type { SessionEvent, SessionHeader } from "../../src/Session/SessionEvent.js"
import { header, LogBuilder } from "./sessionLog.js"

/** Every hostile string of the log (each must appear in an HTML export as text). */
export const hostile = {
  prompt: `Fix <b>this</b> & "that" '</script><script>window.__pwned=1</script>`,
  reasoning: `thinking about <img src="http://evil.invalid/r.png" onerror="window.__pwned=2">`,
  text: `I'll edit <a href='http://evil.invalid/'>the file</a>`,
  oldString: `const a = 1`,
  newString: `const a = "<script>window.__pwned=3</script>"`,
  command: `echo "<iframe src=http://evil.invalid/f></iframe>"`,
  bashError: `<link rel="stylesheet" href="http://evil.invalid/x.css">exit 1`,
  answer: `done <style>body{background:url(http://evil.invalid/bg.png)}</style>`,
  title: `My <title> & "session"`
} as const

/** The header: a fork of `harness-session-parent` seeded with the first two events. */
export const exportHeader: SessionHeader = {
  ...header("harness-session-export-1", "/work/project"),
  parentSession: "harness-session-parent" as SessionId,
  seedLength: 2
}

const text = (t: string) => ({ type: "text", text: t })
const provenance = { provider: "anthropic", model: "claude-test" }

/** The events of the sample session. */
export const exportEvents = (): ReadonlyArray<SessionEvent> => {
  const b = new LogBuilder()
  b.push("turn/start", { turn: 1, trigger: { kind: "message" } })
  b.push("context/message", { content: [text("<system-reminder>AGENTS.md says hi</system-reminder>")], source: { kind: "plugin", plugin: "workspace-context" } }, { surfaceOp: "append" })
  b.push("user/message", { content: [text(hostile.prompt)], source: { kind: "user" } }, { surfaceOp: "append" })
  b.push("step/start", { turn: 1, step: 1 })
  b.push("assistant/chunk", { turn: 1, step: 1, chunk: { type: "reasoning-delta", index: 0, text: hostile.reasoning } })
  b.push("assistant/chunk", { turn: 1, step: 1, chunk: { type: "text-delta", index: 1, text: hostile.text } })
  const edit = JSON.stringify({ file_path: "src/a.ts", old_string: hostile.oldString, new_string: hostile.newString })
  const bash = JSON.stringify({ command: hostile.command })
  b.push("assistant/message", {
    turn: 1,
    step: 1,
    content: [
      { type: "reasoning", text: hostile.reasoning },
      text(hostile.text),
      { type: "tool-call", id: "call-edit", name: "edit", arguments: edit },
      { type: "tool-call", id: "call-bash", name: "bash", arguments: bash }
    ],
    provenance,
    usage: { inputTokens: 100, outputTokens: 20, cacheReadTokens: 50 },
    cost: 0.0012
  }, { surfaceOp: "append" })
  b.push("tool/call", { turn: 1, step: 1, callId: "call-edit", name: "edit", arguments: edit })
  b.push("tool/call", { turn: 1, step: 1, callId: "call-bash", name: "bash", arguments: bash })
  b.push("tool/result", { turn: 1, step: 1, callId: "call-edit", content: [text("edited src/a.ts")], isError: false }, { surfaceOp: "append" })
  b.push("tool/result", { turn: 1, step: 1, callId: "call-bash", content: [text(hostile.bashError)], isError: true, error: { name: "ToolError", code: "EXIT_1" } }, { surfaceOp: "append" })
  b.push("step/end", { turn: 1, step: 1 })
  b.push("step/start", { turn: 1, step: 2 })
  b.push("assistant/message", { turn: 1, step: 2, content: [text(hostile.answer)], provenance, usage: { inputTokens: 180, outputTokens: 8 }, cost: 0.0008 }, { surfaceOp: "append" })
  b.push("step/end", { turn: 1, step: 2 })
  b.push("turn/end", { turn: 1, reason: { kind: "completed" } })
  b.push("turn/start", { turn: 2, trigger: { kind: "message" } })
  b.push("user/message", { content: [text("second question")], source: { kind: "user" } }, { surfaceOp: "append" })
  b.push("step/start", { turn: 2, step: 1 })
  b.push("steering/message", { turn: 2, content: [text("and be brief")], source: { kind: "user" } }, { surfaceOp: "append" })
  b.push("assistant/message", { turn: 2, step: 1, content: [text("partial")], provenance }, { surfaceOp: "append" })
  b.push("step/end", { turn: 2, step: 1 })
  b.push("turn/end", { turn: 2, reason: { kind: "aborted", reason: "cancelled by the user" } })
  b.push("session/title", { title: hostile.title })
  return b.events
}
