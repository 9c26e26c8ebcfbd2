/**
 * Helpers for compaction tests: a scripted model that reports realistic usage (whole-context
 * tokens computed from the request it received), tools with large outputs, and the
 * reconstruction check across compaction (AC-113): every recorded request — step requests AND
 * summary requests — equals, in order, one rebuilt from the log alone.
 */
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Scripted from "../../../src/Adapter/Scripted.js"
import * as ContentBlock from "../../../src/Llm/ContentBlock.js"
import * as Json from "../../../src/Llm/Json.js"
import type { GenerateOptions } from "../../../src/Llm/Message.js"
import * as ModelCatalog from "../../../src/Llm/ModelCatalog.js"
import * as CompactionReconstruct from "../../../src/Loop/Compaction/Reconstruct.js"
import * as TestKit from "../../../src/Loop/TestKit.js"
import * as Reconstruct from "../../../src/Session/Reconstruct.js"
import type { Session } from "../../../src/Session/Session.js"
import * as SessionModule from "../../../src/Session/Session.js"
import type * as SessionPersistence from "../../../src/Session/SessionPersistence.js"
import * as LoopKit from "../../support/LoopKit.js"
import * as Reconstruction from "../../support/Reconstruction.js"

/** "Real" tokens of a request: UTF-8 bytes of its JSON / 4 (the estimator uses /3.5: it errs high). */
export const realTokens = (request: GenerateOptions): number => {
  const { sessionId: _s, ...rest } = request
  return Math.ceil(Buffer.byteLength(JSON.stringify(rest), "utf8") / 4)
}

/** A reply whose usage reports the request's real size as input. */
export const sized = (reply: (request: GenerateOptions) => Scripted.Reply): Scripted.Responder => (request) => {
  const items = reply(request)
  const output = 20
  return [
    ...items.filter((i) => i._tag !== "Usage"),
    Scripted.usage(realTokens(request), output)
  ].sort((a, b) => (a._tag === "Finish" ? 1 : 0) - (b._tag === "Finish" ? 1 : 0))
}

/** A tool call of the `big` tool. */
export const bigCall = (id: string, size: number): Scripted.Responder =>
  sized(() => Scripted.call(id, "big", JSON.stringify({ size, tag: id })))

/** A plain text answer. */
export const say = (text: string): Scripted.Responder => sized(() => Scripted.text(text))

/** A summary answer (with citations supplied by `cite`). */
export const summary = (text: string): Scripted.Responder => sized(() => Scripted.text(text))

/** Deterministic text of `size` characters, different per tag. */
export const filler = (tag: string, size: number): string => {
  const unit = `${tag}: lorem ipsum dolor sit amet ${tag.length} consectetur; `
  return unit.repeat(Math.ceil(size / unit.length)).slice(0, size)
}

/** The `big` tool: returns `size` characters. */
export const big = LoopKit.tool("big", (args) => {
  const a = typeof args === "object" && args !== null ? (args as { size?: number; tag?: string }) : {}
  return Effect.succeed([ContentBlock.text(filler(a.tag ?? "x", a.size ?? 100))])
}, { parallel: true })

/** The test layer with a catalog entry for `scripted/test` of the given window. */
export const layer = (
  script: Scripted.Script,
  contextWindow: number,
  options: { readonly maxOutputTokens?: number; readonly persistence?: Layer.Layer<SessionPersistence.SessionPersistence> } = {}
) =>
  Layer.provideMerge(
    TestKit.layer({
      script,
      tools: [big],
      ...(options.persistence === undefined ? {} : { persistence: options.persistence })
    }),
    ModelCatalog.layer({
      entries: [{ provider: "scripted", model: "test", contextWindow, maxOutputTokens: options.maxOutputTokens ?? 2_000 }]
    })
  )

const canonical = (request: GenerateOptions): string => {
  const { sessionId: _ignored, ...rest } = request
  return Result.match(Json.copyJson(rest), { onFailure: (e) => `<not JSON: ${e.message}>`, onSuccess: Json.canonical })
}

/**
 * AC-113: the recorded requests of `session`, in order, equal the requests rebuilt from its log
 * (step requests by S-20, summary requests by K-10), interleaved in log order. A rebuilt step that
 * streamed nothing may be absent from the recording. `fromSeq`: only requests rebuilt at or after
 * it count (a resumed session: the earlier ones were made by another process). Also checks the log is balanced and a fresh
 * session seeded with the log derives the same history.
 */
export const verify = (session: Session, requests: ReadonlyArray<GenerateOptions>, fromSeq = 0) =>
  Effect.gen(function*() {
    const events = yield* session.events
    // prune replacements re-state a result already answered: not a new call's result
    Reconstruction.expectBalanced(events.filter((e) => !(e.type === "tool/result" && e.surfaceOp !== "append")))
    const steps = Reconstruct.reconstruct(events).map((s) => ({
      seq: s.stepStartSeq,
      request: s.request,
      optional: s.firstChunkSeq === undefined
    }))
    const summaries = CompactionReconstruct.summaryRequests(events).map((s) => ({
      seq: s.seq,
      request: s.request,
      optional: false
    }))
    const rebuilt = [...steps, ...summaries].filter((r) => r.seq >= fromSeq).sort((a, b) => a.seq - b.seq)
    const mine = requests.filter((r) => r.sessionId === session.id)
    let j = 0
    for (const [i, r] of mine.entries()) {
      const want = canonical(r)
      while (j < rebuilt.length) {
        const candidate = rebuilt[j]
        if (candidate?.request !== undefined && canonical(candidate.request) === want) break
        if (candidate?.optional !== true) {
          expect.fail(`AC-113: request ${i} does not match the rebuilt request at seq ${candidate?.seq}`)
        }
        j++
      }
      if (j >= rebuilt.length) expect.fail(`AC-113: request ${i} cannot be rebuilt from the log`)
      j++
    }
    for (; j < rebuilt.length; j++) {
      if (rebuilt[j]?.optional !== true) expect.fail(`AC-113: rebuilt request at seq ${rebuilt[j]?.seq} was never sent`)
    }
    const fresh = yield* Effect.orDie(SessionModule.make({ seed: events }))
    expect(yield* fresh.deriveMessages).toEqual(yield* session.deriveMessages)
    return mine.length
  })

/** `true` when the request is a summary request (ends with the summarisation instruction). */
export const isSummaryRequest = (request: GenerateOptions): boolean => {
  const last = request.messages[request.messages.length - 1]
  return last?.role === "user" && ContentBlock.flattenText(last.content).includes("write a summary of the conversation")
}

/** The seqs the instruction lists for the shadowed messages. */
export const listedSeqs = (request: GenerateOptions): ReadonlyArray<number> => {
  const last = request.messages[request.messages.length - 1]
  const text = last === undefined ? "" : ContentBlock.flattenText(last.content)
  const m = /The messages above are log events ([#\d ]+) in that order/.exec(text)
  return m === null ? [] : Array.from(m[1]?.matchAll(/#(\d+)/g) ?? [], (x) => Number(x[1]))
}

/** A default summary answer: cites the first and last listed seqs, plus one bogus range. */
export const defaultSummary = (request: GenerateOptions): string => {
  const seqs = listedSeqs(request)
  const a = seqs[0] ?? 0
  const b = seqs[seqs.length - 1] ?? 0
  return [
    "## Goal and constraints",
    `- Keep working on the task [#${a}-#${b}]`,
    "## Current state and next step",
    `- Continue with the next file [#${b}] [#900000-#900010]`
  ].join("\n")
}

/**
 * A whole-session script: summary requests are answered by `summarize`, every other request by
 * the next action (then `finalText`). `calls` counts the model calls by kind.
 */
export const scenario = (
  actions: ReadonlyArray<Scripted.Responder>,
  options: {
    readonly summarize?: (request: GenerateOptions) => Scripted.Reply
    readonly finalText?: string
    readonly length?: number
    /** the model rejects requests larger than this (real tokens) with CONTEXT_WINDOW_EXCEEDED */
    readonly window?: number
  } = {}
) => {
  const state = { next: 0, summaries: 0, steps: 0, overflows: 0, largest: 0 }
  const dispatcher: Scripted.Responder = (request, call) => {
    const size = realTokens(request)
    if (!isSummaryRequest(request) && size > state.largest) state.largest = size
    if (options.window !== undefined && size > options.window) {
      state.overflows++
      return [Scripted.fail("CONTEXT_WINDOW_EXCEEDED", `maximum context length is ${options.window} tokens`)]
    }
    if (isSummaryRequest(request)) {
      state.summaries++
      return (options.summarize ?? ((r) => Scripted.text(defaultSummary(r))))(request)
    }
    state.steps++
    const action = actions[state.next++]
    if (action === undefined) return sized(() => Scripted.text(options.finalText ?? "done"))(request, call)
    return action(request, call)
  }
  return { script: Array.from({ length: options.length ?? 2_000 }, () => dispatcher), state }
}

/** A responder failing with CONTEXT_WINDOW_EXCEEDED. */
export const overflow: Scripted.Responder = () => [
  Scripted.fail("CONTEXT_WINDOW_EXCEEDED", "This model's maximum context length is 32000 tokens")
]
