/**
 * The scripted 50-turn session of issue 30, run by the real agent loop over a real provider adapter against a
 * {@link CacheSim} server: three tool calls on two turns in three, two steering messages (sent by a tool while a turn
 * runs), one injected context update, one tool-list change (an MCP server announcing a new tool: a global tool
 * registered mid-session) and one manual compaction. Shared by `test/Loop/CacheScenario.test.ts` and
 * `bench/cache.bench.ts`.
 *
 * The world is sized like a coding agent's: a system prompt of about 16k tokens and five tools (about 4.5k tokens
 * of definitions); prompts, arguments and tool results are deterministic.
 */
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Anthropic from "../../src/Adapter/Anthropic.js"
import * as OpenAiCompatible from "../../src/Adapter/OpenAiCompatible.js"
import * as ContentBlock from "../../src/Llm/ContentBlock.js"
import * as Llm from "../../src/Llm/Llm.js"
import type * as Agent from "../../src/Loop/Agent.js"
import * as SystemPrompt from "../../src/Loop/SystemPrompt.js"
import * as TestKit from "../../src/Loop/TestKit.js"
import * as Tool from "../../src/Loop/Tool.js"
import * as ToolRegistry from "../../src/Loop/ToolRegistry.js"
import * as ToolRuntime from "../../src/Loop/ToolRuntime.js"
import type { SessionEvent } from "../../src/Session/SessionEvent.js"
import * as CacheSim from "./CacheSim.js"

/** The scenario's turn count. */
export const TURNS = 50

/** The routes and models the scenario runs on. */
export const routes = {
  deepseek: { provider: "deepseek", model: "deepseek-v4-flash" },
  anthropic: { provider: "anthropic", model: "claude-sonnet-4-5" }
} as const

// deterministic filler text of about `chars` characters
const filler = (seed: string, chars: number): string => {
  const words = ["file", "module", "test", "layer", "effect", "stream", "scope", "fiber", "schema", "session", "cache", "request"]
  let out = ""
  let i = seed.length
  while (out.length < chars) {
    out += `${words[i % words.length]}${i % 7 === 0 ? "." : ""} `
    i = (i * 31 + 7) % 1009
  }
  return out.slice(0, chars)
}

/** the agent a `work` call steers (set once the agent exists) */
interface SteerTarget {
  current: Agent.Agent | undefined
}

const workTool = (target: SteerTarget) =>
  Tool.make({
    name: "work",
    description: `Does one unit of work on the repository. ${filler("work", 2000)}`,
    parameters: Schema.Struct({ task: Schema.String, steer: Schema.optionalKey(Schema.Boolean) }),
    execute: (args: { readonly task: string; readonly steer?: boolean }) =>
      Effect.gen(function*() {
        if (args.steer === true && target.current !== undefined) {
          yield* Effect.orDie(target.current.steer([ContentBlock.text(`Steering: keep ${args.task} small and add a test.`)]))
        }
        return [ContentBlock.text(`done: ${args.task}\n${filler(args.task, 800)}`)]
      })
  })

const fillerTool = (name: string) =>
  Tool.make({
    name,
    description: `${name}: ${filler(name, 3500)}`,
    parameters: Schema.Struct({ path: Schema.String }),
    execute: (args: { readonly path: string }) => Effect.succeed([ContentBlock.text(`${name} ${args.path}`)])
  })

/** The global tools the scenario's layer needs. */
export const tools = (target: SteerTarget) =>
  [workTool(target), fillerTool("read"), fillerTool("grep"), fillerTool("edit"), fillerTool("ls")] as const

/** A fresh steer target for {@link tools}. */
export const steerTarget = (): SteerTarget => ({ current: undefined })

// ---------------------------------------------------------------------------------------------
// the simulated model

type Rec = Record<string, unknown>
const isRec = (u: unknown): u is Rec => typeof u === "object" && u !== null && !Array.isArray(u)

/** the text of a wire message (either wire format) and how many tool calls it carries */
const inspect = (m: unknown): { readonly role: string; readonly text: string; readonly calls: number; readonly results: number } => {
  if (!isRec(m)) return { role: "", text: "", calls: 0, results: 0 }
  const role = String(m["role"])
  const content = m["content"]
  let text = typeof content === "string" ? content : ""
  const toolCalls: unknown = m["tool_calls"]
  let calls = Array.isArray(toolCalls) ? toolCalls.length : 0
  let results = role === "tool" ? 1 : 0
  let lastIsText = typeof content === "string"
  if (Array.isArray(content)) {
    const blocks: ReadonlyArray<unknown> = content
    for (const b of blocks) {
      if (!isRec(b)) continue
      if (b["type"] === "text") text += String(b["text"])
      if (b["type"] === "tool_use") calls++
      if (b["type"] === "tool_result") results++
      lastIsText = b["type"] === "text"
    }
  }
  return { role, text: lastIsText ? text : "", calls, results }
}

/** The simulated model: a prompt `calls=N` gets N `work` calls (one per request), then a text answer. */
export const respond: CacheSim.Responder = (body, index) => {
  const raw: unknown = body["messages"]
  const messages: ReadonlyArray<unknown> = Array.isArray(raw) ? raw : []
  let lastPrompt = -1
  for (let i = messages.length - 1; i >= 0 && lastPrompt < 0; i--) if (/calls=\d/.test(inspect(messages[i]).text)) lastPrompt = i
  const last = inspect(messages[messages.length - 1])
  if (lastPrompt < 0 || (last.role !== "tool" && last.results === 0 && !/calls=\d/.test(last.text))) {
    return { _tag: "Text", text: `Answer ${index}: ${filler(`a${index}`, 300)}` }
  }
  const prompt = inspect(messages[lastPrompt]).text
  const want = Number(/calls=(\d)/.exec(prompt)?.[1] ?? "0")
  const done = messages.slice(lastPrompt + 1).reduce<number>((n, m) => n + inspect(m).calls, 0)
  if (done >= want) return { _tag: "Text", text: `Done with the task. ${filler(`d${index}`, 300)}` }
  const steer = /steer=yes/.test(prompt) && done === 0
  return {
    _tag: "ToolCall",
    id: `call_${index}`,
    name: "work",
    arguments: JSON.stringify(steer ? { task: `task ${index}`, steer: true } : { task: `task ${index}` })
  }
}

/** What a run produced: every exchange with the simulated provider and the session log. */
export interface Outcome {
  readonly exchanges: ReadonlyArray<CacheSim.Exchange>
  readonly events: ReadonlyArray<SessionEvent>
}

/**
 * Runs the scenario on `provider` (needs `TestKit.layer({ script: [], tools: tools(target) })` with the same
 * target).
 */
export const run = (provider: "deepseek" | "anthropic", target: SteerTarget) =>
  Effect.gen(function*() {
    const server = yield* CacheSim.serve({ provider, respond })
    const apiKey = Redacted.make("sk-sim-key")
    const adapter = provider === "deepseek"
      ? yield* OpenAiCompatible.make({ profile: "deepseek", apiKey, baseUrl: server.url })
      : yield* Anthropic.make({ apiKey, baseUrl: server.url })
    yield* Llm.register(adapter.providers, adapter)
    const route = routes[provider]
    const t = yield* TestKit.agent({ provider: route.provider, model: route.model, compaction: { retain: 0.05 } })
    target.current = t.agent
    const sp = yield* SystemPrompt.SystemPrompt
    yield* sp.registerSection({ name: "base", order: 10, text: filler("system", 64_000) }, { agentId: t.agent.id })
    const runtime = yield* ToolRuntime.ToolRuntime
    for (let turn = 1; turn <= TURNS; turn++) {
      if (turn === 8) {
        // an MCP server announces a new tool: the tool list changes (appended last)
        yield* ToolRegistry.register(runtime.globals, fillerTool("mcp__docs__search"))
      }
      if (turn === 20) {
        yield* t.agent.inject([ContentBlock.text(`<system-reminder>README.md changed on disk. ${filler("ctx", 400)}</system-reminder>`)])
      }
      if (turn === 35) yield* t.agent.compact()
      const calls = turn % 3 === 0 ? 0 : 3
      const steer = turn === 11 || turn === 31 ? "yes" : "no"
      yield* t.prompt(`Turn ${turn}: ${filler(`p${turn}`, 400)} calls=${calls} steer=${steer}`)
    }
    return { exchanges: server.exchanges(), events: yield* t.events } satisfies Outcome
  })

/** Runs the scenario in its own world. */
export const runIsolated = (provider: "deepseek" | "anthropic"): Effect.Effect<Outcome, unknown, Scope.Scope> => {
  const target = steerTarget()
  return run(provider, target).pipe(Effect.provide(TestKit.layer({ script: [], tools: tools(target) })))
}
