/**
 * Demo (AC-117): a 300-step scripted coding session under a 64k window, with compaction on.
 *
 * Run: `npx tsx scratchpad/long-session.ts` (options: `--steps N`, `--window N`, `--result-bytes N`).
 *
 * The scripted "model" behaves like a real one where it matters: it reports whole-context usage
 * (UTF-8 bytes of the request / 4 — a real tokenizer's ratio; the harness's estimator uses 3.5 and
 * so errs high), it REJECTS any request above its window with `CONTEXT_WINDOW_EXCEEDED`, it reads
 * a 12 KB file per step (the `read` tool), ends each of its 25 user turns with a short answer, and
 * answers summary requests with a cited summary. Prints every compaction (trigger, pressure
 * before → after, duration) and checks that every request stayed under the window.
 *
 * @since 0.1.0
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Console from "effect/Console"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { pathToFileURL } from "node:url"
import * as Scripted from "../src/Adapter/Scripted.js"
import * as ContentBlock from "../src/Llm/ContentBlock.js"
import type { GenerateOptions } from "../src/Llm/Message.js"
import * as ModelCatalog from "../src/Llm/ModelCatalog.js"
import * as TestKit from "../src/Loop/TestKit.js"
import * as Tool from "../src/Loop/Tool.js"
import type { SessionEvent } from "../src/Session/SessionEvent.js"

/** Settings of one run. */
export interface Settings {
  readonly steps: number
  readonly window: number
  readonly resultBytes: number
  readonly stepsPerTurn: number
}

/** What a run measured. */
export interface Report {
  readonly steps: number
  readonly turns: number
  readonly requests: number
  readonly summaryRequests: number
  readonly largestRequest: number
  readonly overflows: number
  readonly newContentTokens: number
  readonly compactions: ReadonlyArray<{
    readonly trigger: string
    readonly before: number
    readonly after: number
    readonly summarized: boolean
    readonly ms: number
  }>
  readonly turnEnds: ReadonlyArray<string>
  readonly events: ReadonlyArray<SessionEvent>
}

const realTokens = (request: GenerateOptions): number => {
  const { sessionId: _s, ...rest } = request
  return Math.ceil(Buffer.byteLength(JSON.stringify(rest), "utf8") / 4)
}

const fileText = (n: number, bytes: number): string => {
  const line = (i: number) => `export const value${n}_${i} = compute(${i}, "src/module${n}.ts") // line ${i}\n`
  let out = ""
  for (let i = 0; out.length < bytes; i++) out += line(i)
  return out.slice(0, bytes)
}

const isSummaryRequest = (r: GenerateOptions): boolean => {
  const last = r.messages[r.messages.length - 1]
  return last?.role === "user" && ContentBlock.flattenText(last.content).includes("write a summary of the conversation")
}

/** Runs the session; returns what it measured. */
export const run = (settings: Settings) =>
  Effect.gen(function*() {
    const stats = { overflows: 0, largest: 0, summaries: 0, step: 0, newContent: 0 }
    const respond: Scripted.Responder = (request) => {
      const size = realTokens(request)
      if (size > settings.window) {
        stats.overflows++
        return [Scripted.fail("CONTEXT_WINDOW_EXCEEDED", `maximum context length is ${settings.window} tokens`)]
      }
      const usage = Scripted.usage(size, 40)
      if (isSummaryRequest(request)) {
        stats.summaries++
        const last = ContentBlock.flattenText(request.messages[request.messages.length - 1]!.content)
        const seqs = Array.from(/log events ([#\d ]+) in that order/.exec(last)?.[1]?.matchAll(/#(\d+)/g) ?? [], (m) => Number(m[1]))
        const a = seqs[0] ?? 0
        const b = seqs[seqs.length - 1] ?? 0
        const mid = seqs[Math.floor(seqs.length / 2)] ?? a
        return [
          Scripted.say([
            "## Goal and constraints",
            `- Port every module under src/ to the new compute() API without changing behaviour [#${a}-#${b}]`,
            "## Files",
            `- Read src/module*.ts up to the latest one [#${a}-#${mid}] [#${mid}-#${b}]`,
            "## Current state and next step",
            `- Continue with the next module [#${b}]`
          ].join("\n")),
          usage,
          Scripted.finish("stop")
        ]
      }
      if (size > stats.largest) stats.largest = size
      stats.step++
      if (stats.step % settings.stepsPerTurn === 0) {
        return [Scripted.say(`Turn done after step ${stats.step}.`), usage, Scripted.finish("stop")]
      }
      return [Scripted.toolCall(`call_${stats.step}`, "read", JSON.stringify({ n: stats.step })), usage, Scripted.finish("tool-calls")]
    }
    const read = Tool.raw({
      name: "read",
      description: "Reads a file",
      parameters: { type: "object", properties: { n: { type: "integer" } } },
      execute: (args) =>
        Effect.sync(() => {
          const n = (args as { readonly n: number }).n
          stats.newContent += Math.ceil(settings.resultBytes / 4)
          return [ContentBlock.text(fileText(n, settings.resultBytes))]
        })
    })
    const layer = TestKit.layer({ script: Array.from({ length: settings.steps * 2 + 200 }, () => respond), tools: [read] })
      .pipe(Layer.provideMerge(ModelCatalog.layer({
        entries: [{ provider: "scripted", model: "test", contextWindow: settings.window, maxOutputTokens: 8_192 }]
      })))
    return yield* Effect.scoped(Effect.gen(function*() {
      const t = yield* TestKit.agent({ compaction: {}, systemPrompt: { persona: "You are a meticulous coding agent." } })
      const compactions: Array<Report["compactions"][number]> = []
      let startedAt = 0
      let pending: { trigger: string; before: number } | undefined
      let summarized = false
      yield* t.agent.session.observe((e) =>
        Effect.sync(() => {
          if (e.type === "compact/start") {
            startedAt = performance.now()
            pending = { trigger: e.data.trigger, before: e.data.pressureTokens }
            summarized = false
          } else if (e.type === "compact/summary" && e.data.summary !== "") summarized = true
          else if (e.type === "compact/end" && pending !== undefined) {
            compactions.push({ ...pending, after: e.data.pressureAfter, summarized, ms: performance.now() - startedAt })
            pending = undefined
          }
        })
      )
      let turns = 0
      while (stats.step < settings.steps) {
        turns++
        yield* t.prompt(`Port the next ${settings.stepsPerTurn - 1} modules (turn ${turns}).`)
      }
      const requests = yield* t.requests
      return {
        steps: stats.step,
        turns,
        requests: requests.length,
        summaryRequests: stats.summaries,
        largestRequest: stats.largest,
        overflows: stats.overflows,
        newContentTokens: stats.newContent,
        compactions,
        turnEnds: (yield* t.turnEnds).map((r) => r.kind),
        events: yield* t.events
      } satisfies Report
    }).pipe(Effect.provide(layer)))
  })

/** The demo's failure: a request went over the window. */
class WindowExceeded extends Data.TaggedError("WindowExceeded")<{ readonly largest: number; readonly window: number }> {}

const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`)
  const v = i >= 0 ? Number(process.argv[i + 1]) : NaN
  return Number.isFinite(v) && v > 0 ? v : fallback
}

const main = Effect.gen(function*() {
  const settings: Settings = {
    steps: arg("steps", 300),
    window: arg("window", 64_000),
    resultBytes: arg("result-bytes", 12_000),
    stepsPerTurn: 12
  }
  const started = performance.now()
  const r = yield* run(settings)
  yield* Console.log(`long session: ${r.steps} steps in ${r.turns} turns, ${settings.resultBytes} B per tool result, window ${settings.window}`)
  for (const [i, c] of r.compactions.entries()) {
    yield* Console.log(
      `  compaction ${String(i + 1).padStart(2)}: ${c.trigger.padEnd(9)} ${String(c.before).padStart(6)} → ${
        String(c.after).padStart(6)
      } tokens (${c.summarized ? "summary" : "prune only"}, ${c.ms.toFixed(0)} ms)`
    )
  }
  const under = r.largestRequest <= settings.window && r.overflows === 0
  yield* Console.log(`requests: ${r.requests} (${r.summaryRequests} summary requests); largest step request ${r.largestRequest} tokens`)
  yield* Console.log(`overflows: ${r.overflows}; every request under the ${settings.window}-token window: ${under ? "yes" : "NO"}`)
  yield* Console.log(
    `new tool content ≈ ${r.newContentTokens} tokens = ${(r.newContentTokens / settings.window).toFixed(1)} windows; compactions ${r.compactions.length} (${
      (r.compactions.length / (r.newContentTokens / settings.window)).toFixed(2)
    } per window of new content)`
  )
  yield* Console.log(`turn ends: ${[...new Set(r.turnEnds)].join(", ")}; log ${r.events.length} events; ${((performance.now() - started) / 1000).toFixed(1)} s`)
  if (!under) return yield* new WindowExceeded({ largest: r.largestRequest, window: settings.window })
})

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) NodeRuntime.runMain(main)
