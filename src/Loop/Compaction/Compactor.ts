/**
 * The compaction engine (K-3..K-12, K-14): one {@link Controller} per agent (when compaction is
 * enabled) and {@link run}, which performs one compaction inside the open turn.
 *
 * One compaction, in log order (K-10):
 * 1. `pre-compact` (may add instructions; may veto an automatic compaction: nothing is logged);
 * 2. `compact/start {turn, trigger, pressureTokens, contextWindow}`;
 * 3. the cheap pass (K-5): old long tool results replaced, one `tool/result` replace each, in one
 *    append batch; pressure re-measured; below `pruneTarget × window` the summary is skipped;
 * 4. the summary request (K-7) through the conversation's own prefix: the latest logged request
 *    header's config (with the summary `maxTokens`), system prompt, tools and session prefix, the
 *    projected messages of the shadowed range unchanged, then the instruction;
 * 5. `compact/summary` (logged for every summary request made, so each one is rebuildable from
 *    the log: the surface just before it, the header before `compact/start`, the logged
 *    instruction and `maxTokens`), and — only on success, in the same append batch — the ONE
 *    surface replace of the shadowed range by a `user/message` (plugin source `compaction`)
 *    holding the harness's framing line, the checked summary and, verbatim, the prompts that
 *    opened the current turn when they were shadowed (K-6);
 * 6. `compact/end {turn, pressureBefore, pressureAfter, error?}`; then `post-compact`.
 *
 * Failure (K-11): an empty answer, a failed request, an answer with a tool call, or a summary not
 * shorter than its source ends with `compact/end {error}` and no replace (the prunes of step 3
 * stay: each is a complete replace on its own). Cancellation during the summary request ends with
 * `compact/end {error: ABORTED}`.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as BlockAssembler from "../../Llm/BlockAssembler.js"
import type { ContentBlock } from "../../Llm/ContentBlock.js"
import * as ContentBlocks from "../../Llm/ContentBlock.js"
import type { GenerateOptions, Message, TokenUsage } from "../../Llm/Message.js"
import * as ModelCatalog from "../../Llm/ModelCatalog.js"
import * as Projection from "../../Session/Projection.js"
import type { SessionError } from "../../Session/SessionError.js"
import type { AppendInput, CompactTrigger, EpochHeader, SessionEvent } from "../../Session/SessionEvent.js"
import * as Hooks from "../Hooks.js"
import type { HookFailure } from "../Interception.js"
import type { Runtime } from "../internal/Runtime.js"
import * as Spans from "../internal/Spans.js"
import * as Usage from "../internal/Usage.js"
import * as StepSignal from "../StepSignal.js"
import * as Estimate from "./Estimate.js"
import * as Options from "./Options.js"
import * as Pressure from "./Pressure.js"
import * as Region from "./Region.js"
import * as Summary from "./Summary.js"

/**
 * The message source of summaries (and of nothing else).
 *
 * @since 0.1.0
 * @category constants
 */
export const SOURCE = { kind: "plugin", plugin: "compaction" } as const

/**
 * Per-agent compaction state.
 *
 * @since 0.1.0
 * @category models
 */
export interface Controller {
  readonly options: Options.Resolved
  readonly catalog: ModelCatalog.Service
  readonly tracker: Pressure.Tracker
  /** unknown models already announced by a `model/notice` in this instance */
  readonly noticed: Set<string>
}

/**
 * A fresh controller.
 *
 * @since 0.1.0
 * @category constructors
 */
export const controller = (options: Options.Resolved, catalog: ModelCatalog.Service): Controller => ({
  options,
  catalog,
  tracker: Pressure.tracker(),
  noticed: new Set()
})

/**
 * The window facts in force for `(provider, model)`; an unknown model is announced once per
 * instance with a `model/notice` event (K-1).
 *
 * @since 0.1.0
 * @category utils
 */
export const windowOf = (rt: Runtime, c: Controller, provider: string, model: string) =>
  Effect.gen(function*() {
    const found = yield* c.catalog.lookup(provider, model)
    const contextWindow = c.options.contextWindow ?? found.facts.contextWindow
    if (!found.known && c.options.contextWindow === undefined && !c.noticed.has(`${provider}/${model}`)) {
      c.noticed.add(`${provider}/${model}`)
      yield* rt.session.append({
        type: "model/notice",
        data: {
          provider,
          model,
          contextWindow,
          message: `unknown model ${provider}/${model}: assuming a ${contextWindow}-token context window`
        }
      })
    }
    const reserve = c.options.reserve ?? Math.min(found.facts.maxOutputTokens, Options.RESERVE_CAP)
    return { contextWindow, reserve }
  })

/**
 * The route and fixed-part estimate of the conversation: the latest logged header, else the
 * agent options.
 *
 * @since 0.1.0
 * @category utils
 */
export const routeOf = (rt: Runtime, header: EpochHeader | undefined): { readonly provider: string; readonly model: string } =>
  header === undefined
    ? { provider: rt.options.provider ?? "", model: rt.options.model ?? "" }
    : { provider: header.config.provider, model: header.config.model }

/**
 * The outcome of one compaction.
 *
 * @since 0.1.0
 * @category models
 */
export type Outcome =
  | { readonly _tag: "Vetoed"; readonly reason: string }
  | {
    readonly _tag: "Done"
    readonly pressureBefore: number
    readonly pressureAfter: number
    readonly summarized: boolean
    readonly pruned: number
    /** estimated tokens of the kept tail */
    readonly keptTokens: number
  }
  | {
    readonly _tag: "Failed"
    readonly code: string
    readonly message: string
    readonly pressureBefore: number
    readonly pressureAfter: number
  }
  | { readonly _tag: "Aborted" }

/**
 * What one compaction needs to know.
 *
 * @since 0.1.0
 * @category models
 */
export interface Input {
  readonly turn: number
  readonly trigger: CompactTrigger
  /** seq of the current turn's `turn/start` (its prompts are kept verbatim, K-6) */
  readonly turnStartSeq: number
  /** estimate of system prompt + tools + prefix of the next request (pressure without anchor) */
  readonly fixed: number
  readonly signal: StepSignal.StepSignal
  /** a manual compaction's own instructions */
  readonly instructions: ReadonlyArray<string>
}

const coveredMemo = new WeakMap<SessionEvent, readonly [number, number]>()

/**
 * The event seqs a surface node stands for: itself, or — for a node that entered by a replace —
 * everything its sources stood for (recursively).
 *
 * @since 0.1.0
 * @category utils
 */
export const covered = (events: ReadonlyArray<SessionEvent>, node: SessionEvent): readonly [number, number] => {
  const cached = coveredMemo.get(node)
  if (cached !== undefined) return cached
  let out: readonly [number, number] = [node.seq, node.seq]
  if (node.surfaceOp !== undefined && node.surfaceOp !== "append" && node.sourceEventSeqs !== undefined) {
    let lo = Infinity
    let hi = -Infinity
    for (const s of node.sourceEventSeqs) {
      const src = events[s]
      if (src === undefined) continue
      const [a, b] = covered(events, src)
      if (a < lo) lo = a
      if (b > hi) hi = b
    }
    if (lo <= hi) out = [lo, hi]
  }
  coveredMemo.set(node, out)
  return out
}

/**
 * `true` for a summary node written by compaction.
 *
 * @since 0.1.0
 * @category guards
 */
export const isSummary = (node: SessionEvent): boolean =>
  node.type === "user/message" && node.data.source.kind === "plugin" &&
  (node.data.source as { readonly plugin?: string }).plugin === SOURCE.plugin

/**
 * Builds the summary request exactly as {@link run} sends it (and as it is rebuilt from the log).
 *
 * @since 0.1.0
 * @category constructors
 */
export const summaryRequest = (
  header: EpochHeader,
  route: { readonly provider: string; readonly model: string },
  maxTokens: number,
  shadowed: ReadonlyArray<Message>,
  instruction: string
): GenerateOptions => {
  const { maxTokens: _ignored, ...config } = header.config
  const out: GenerateOptions = {
    ...config,
    provider: route.provider,
    model: route.model,
    maxTokens,
    messages: [
      ...(header.messagePrefix ?? []),
      ...shadowed,
      { role: "user", content: [ContentBlocks.text(instruction)] }
    ],
    ...(header.system === undefined ? {} : { system: header.system }),
    ...(header.tools === undefined ? {} : { tools: header.tools })
  }
  return out
}

type Answer =
  | { readonly _tag: "Ok"; readonly text: string; readonly usage: TokenUsage | undefined }
  | { readonly _tag: "Bad"; readonly code: string; readonly message: string; readonly raw: string; readonly usage: TokenUsage | undefined }

const ask = (rt: Runtime, request: GenerateOptions, signal: StepSignal.StepSignal) =>
  Effect.map(
    StepSignal.interruptible(
      signal,
      Effect.result(rt.llm.stream(request).pipe(Stream.run(BlockAssembler.sink)))
    ),
    Option.map((either): Answer => {
      if (either._tag === "Failure") {
        const e = either.failure
        const code = (e as { readonly code?: unknown }).code
        return { _tag: "Bad", code: typeof code === "string" ? code : "UNKNOWN", message: e.message, raw: "", usage: undefined }
      }
      const r = either.success
      const raw = ContentBlocks.flattenText(r.blocks.filter((b) => b.type === "text"))
      if (r.finish.kind === "error") {
        return { _tag: "Bad", code: r.finish.code ?? "COMPACTION_SUMMARY_FAILED", message: r.finish.message, raw, usage: r.usage }
      }
      if (r.finish.kind === "aborted") {
        return { _tag: "Bad", code: "ABORTED", message: "the summary stream was aborted", raw, usage: r.usage }
      }
      if (r.blocks.some((b) => b.type === "tool-call")) {
        return { _tag: "Bad", code: "COMPACTION_SUMMARY_FAILED", message: "the summary answer called a tool", raw, usage: r.usage }
      }
      if (raw.trim() === "") {
        return { _tag: "Bad", code: "COMPACTION_SUMMARY_FAILED", message: "the summary answer was empty", raw, usage: r.usage }
      }
      return { _tag: "Ok", text: raw, usage: r.usage }
    })
  )

/** The prompts that opened the turn (user/message events between turn/start and the first step). */
const openingPrompts = (events: ReadonlyArray<SessionEvent>, turnStartSeq: number): ReadonlyArray<SessionEvent> => {
  const out: Array<SessionEvent> = []
  for (let i = turnStartSeq + 1; i < events.length; i++) {
    const e = events[i] as SessionEvent
    if (e.type === "step/start" || e.type === "turn/end") break
    if (e.type === "user/message" && !isSummary(e)) out.push(e)
  }
  return out
}

/**
 * Runs one compaction inside the open turn (see the module doc).
 *
 * @since 0.1.0
 * @category compaction
 */
export const run = (rt: Runtime, c: Controller, input: Input): Effect.Effect<Outcome, SessionError | HookFailure> =>
  Spans.compaction(rt.session.id, input, runCompaction(rt, c, input))

const runCompaction = (rt: Runtime, c: Controller, input: Input): Effect.Effect<Outcome, SessionError | HookFailure> =>
  Effect.gen(function*() {
    const session = rt.session
    const agent = rt.agent
    const header = yield* session.requestHeader
    const route = routeOf(rt, header)
    const { contextWindow } = yield* windowOf(rt, c, route.provider, route.model)
    const measure = Effect.map(session.surface, (view) => c.tracker.measure(view, input.fixed).tokens)
    const before = yield* measure
    // 1. pre-compact
    const decision = yield* rt.hooks.preCompact.run(
      agent.id,
      {
        agent,
        turn: input.turn,
        trigger: input.trigger,
        pressureTokens: before,
        contextWindow,
        instructions: input.instructions
      },
      (i) => Effect.succeed(Hooks.PreCompactDecision.Proceed({ instructions: i.instructions }))
    )
    if (decision._tag === "Veto" && input.trigger !== "manual") {
      return { _tag: "Vetoed", reason: decision.reason } satisfies Outcome
    }
    const instructions = decision._tag === "Proceed" ? decision.instructions : input.instructions
    // 2.
    yield* session.append({
      type: "compact/start",
      data: { turn: input.turn, trigger: input.trigger, pressureTokens: before, contextWindow }
    })
    const finish = (after: number, error: { readonly code: string; readonly message: string } | undefined, summary: string | undefined) =>
      Effect.gen(function*() {
        yield* session.append({
          type: "compact/end",
          data: error === undefined
            ? { turn: input.turn, pressureBefore: before, pressureAfter: after }
            : { turn: input.turn, pressureBefore: before, pressureAfter: after, error }
        })
        yield* rt.hooks.postCompact.run(agent.id, {
          agent,
          turn: input.turn,
          trigger: input.trigger,
          summary,
          pressureBefore: before,
          pressureAfter: after,
          error
        })
      })
    // 3. region and the cheap pass
    const retainTokens = Math.ceil(c.options.retain * contextWindow)
    const view0 = yield* session.surface
    const cut = Region.planCut(view0.nodes, retainTokens)
    const prunes = Region.planPrunes(view0.nodes, cut.cut)
    if (prunes.length > 0) {
      yield* session.appendAll(prunes.map((p): AppendInput => ({
        type: "tool/result",
        data: {
          turn: p.node.data.turn,
          step: p.node.data.step,
          callId: p.node.data.callId,
          content: [ContentBlocks.text(p.text)],
          isError: p.node.data.isError,
          ...(p.node.data.error === undefined ? {} : { error: p.node.data.error }),
          meta: { kind: "compaction/prune", originalSeq: p.originalSeq, omittedCodePoints: p.omitted }
        },
        surfaceOp: { op: "replace", start: p.node.seq, end: p.node.seq },
        sourceEventSeqs: [p.node.seq]
      })))
    }
    const afterPrune = yield* measure
    const done = (after: number, summarized: boolean): Outcome => ({
      _tag: "Done",
      pressureBefore: before,
      pressureAfter: after,
      summarized,
      pruned: prunes.length,
      keptTokens: cut.keptTokens
    })
    if (prunes.length > 0 && afterPrune < c.options.pruneTarget * contextWindow) {
      yield* finish(afterPrune, undefined, undefined)
      return done(afterPrune, false)
    }
    const fail = (code: string, message: string, after: number) =>
      Effect.as(finish(after, { code, message }, undefined), {
        _tag: "Failed",
        code,
        message,
        pressureBefore: before,
        pressureAfter: after
      } satisfies Outcome)
    if (cut.cut === 0 || header === undefined) {
      if (prunes.length > 0) {
        yield* finish(afterPrune, undefined, undefined)
        return done(afterPrune, false)
      }
      return yield* fail(
        "COMPACTION_NOTHING_TO_DO",
        header === undefined
          ? "no model request was made yet, so there is nothing to summarise"
          : `the whole conversation (${cut.keptTokens} tokens) is the kept tail`,
        afterPrune
      )
    }
    // 4. the summary request
    const events = yield* session.events
    const view = yield* session.surface
    const shadowedNodes = view.nodes.slice(0, cut.cut)
    let first = Infinity
    let last = -Infinity
    for (const node of shadowedNodes) {
      const [a, b] = covered(events, node)
      if (a < first) first = a
      if (b > last) last = b
    }
    const shadowedMessages: Array<Message> = []
    const messageSeqs: Array<number> = []
    let shadowedTokens = 0
    for (const node of shadowedNodes) {
      const m = Projection.deriveEventMessage(node)
      if (m === undefined) continue
      shadowedMessages.push(m)
      messageSeqs.push(node.seq)
      shadowedTokens += Estimate.message(m)
    }
    const instruction = Summary.instruction({
      messageSeqs,
      first,
      last,
      hasPreviousSummary: shadowedNodes.some(isSummary),
      extra: instructions
    })
    const summaryRoute = c.options.summaryModel ?? route
    const request = summaryRequest(header, summaryRoute, c.options.maxTokens, shadowedMessages, instruction)
    const answer = yield* ask(rt, { ...request, sessionId: session.id }, input.signal)
    if (Option.isNone(answer)) {
      yield* finish(afterPrune, { code: "ABORTED", message: "the compaction was cancelled" }, undefined)
      return { _tag: "Aborted" } satisfies Outcome
    }
    const a = answer.value
    const raw = a._tag === "Ok" ? a.text : a.raw
    const checked = Summary.checkCitations(raw, first, last)
    const summaryText = `${Summary.framing(first, last)}\n\n${checked.text.trim()}`
    const bad: { readonly code: string; readonly message: string } | undefined = a._tag === "Bad"
      ? { code: a.code, message: a.message }
      : Estimate.text(summaryText) >= shadowedTokens
      ? { code: "COMPACTION_SUMMARY_FAILED", message: "the summary was not shorter than what it replaces" }
      : undefined
    const summaryEvent: AppendInput = {
      type: "compact/summary",
      data: {
        turn: input.turn,
        provider: summaryRoute.provider,
        model: summaryRoute.model,
        maxTokens: c.options.maxTokens,
        instruction,
        shadowedSeqs: [first, last],
        range: { start: (shadowedNodes[0] as SessionEvent).seq, end: (shadowedNodes[shadowedNodes.length - 1] as SessionEvent).seq },
        shadowedTokens,
        summary: bad === undefined ? summaryText : "",
        rawOutput: raw,
        ...(a.usage === undefined ? {} : { usage: a.usage }),
        ...Usage.field(c.catalog, summaryRoute, a.usage),
        droppedCitations: checked.dropped
      }
    }
    if (bad !== undefined) {
      yield* session.append(summaryEvent)
      return yield* fail(bad.code, bad.message, afterPrune)
    }
    // 5. the one replace, appended together with its summary event (K-12)
    const keptSeqs = new Set(view.nodes.slice(cut.cut).map((n) => n.seq))
    const reappended = openingPrompts(events, input.turnStartSeq).filter((e) => !keptSeqs.has(e.seq))
    const opening: Array<ContentBlock> = []
    for (const e of reappended) if (e.type === "user/message") opening.push(...e.data.content)
    const sources = new Set(shadowedNodes.map((n) => n.seq))
    for (const e of reappended) sources.add(e.seq)
    yield* session.appendAll([summaryEvent, {
      type: "user/message",
      data: { content: [ContentBlocks.text(summaryText), ...opening], source: SOURCE },
      surfaceOp: {
        op: "replace",
        start: (shadowedNodes[0] as SessionEvent).seq,
        end: (shadowedNodes[shadowedNodes.length - 1] as SessionEvent).seq
      },
      sourceEventSeqs: [...sources].sort((x, y) => x - y)
    }])
    const after = yield* measure
    yield* finish(after, undefined, summaryText)
    return done(after, true)
  })
