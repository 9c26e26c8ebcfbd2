/**
 * The recording rule (L-12, L-12.11, L-20, L-22, L-30, C-7): how one finished model stream becomes
 * the step's `assistant/message`. Pure functions, used by the loop when it records a message
 * (`Step`) and by `harness sessions replay` / `verify` when they check one, so the two cannot
 * disagree (decision 0011).
 *
 * The rule, in order:
 * 1. **Failed and aborted streams are not recorded** (L-20): a final `finish` of kind `error`
 *    (message and code copied) or `aborted` (message "model stream aborted", code `ABORTED`) goes to
 *    request recovery (L-20); the step logs its chunks and no message. A model-request failure of
 *    the stream itself is the same case (no finish at all).
 * 2. **max-tokens drops tool calls** (L-12.11): `step-result` is offered the assembled content
 *    without its `tool-call` blocks, and the tool calls of whatever it returns are removed again;
 *    no tool runs and the turn becomes `max-tokens` (L-30).
 * 3. **Content is recorded verbatim** (L-22): the assembled (or rewritten) blocks exactly as the
 *    assembler built them; no trimming, no dropping of empty or whitespace-only text (a text block
 *    `"\n\n"` is recorded as `"\n\n"`); an empty stream records `content: []`.
 * 4. **Replay state** (C-7, L-22): the finish chunk's `replayState` is kept in the provenance only
 *    when the final content deep-equals the assembled content; any rewrite (including the
 *    max-tokens drop of a tool call) or in-place mutation drops it.
 * 5. **Provenance and usage**: `{provider, model}` of the request's config (the logged header's
 *    route), usage = the last usage chunk when there was one.
 * 6. **step-result failure** (L-22): an anchor with `content: []`, usage kept, no replay state.
 * 7. **Calls executed**: the tool calls of the recorded message, none for max-tokens.
 *
 * {@link rules} names every clause, so a verifier can say which one a log breaks.
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"
import type * as BlockAssembler from "../Llm/BlockAssembler.js"
import type { ContentBlock, ToolCallBlock } from "../Llm/ContentBlock.js"
import * as Json from "../Llm/Json.js"
import type { FinishReason, Provenance, TokenUsage } from "../Llm/Message.js"
import type { SessionEventMap } from "../Session/SessionEvent.js"

/**
 * One clause of the recording rule: a stable short name, the spec ids it restates and one
 * sentence a reader understands without the spec.
 *
 * @since 0.1.0
 * @category models
 */
export interface Rule {
  readonly name: string
  readonly spec: string
  readonly text: string
}

/**
 * The clauses of the recording rule.
 *
 * @since 0.1.0
 * @category constants
 */
export const rules = {
  oneMessagePerCall: {
    name: "one-message-per-call",
    spec: "L-22",
    text: "every successful model call records exactly one assistant message"
  },
  failedStreamNotRecorded: {
    name: "failed-stream-not-recorded",
    spec: "L-20",
    text: "a stream that ends in error or aborted records no assistant message"
  },
  sources: {
    name: "sources-are-the-step-chunks",
    spec: "L-22",
    text: "an assistant message's sources are exactly its step's chunks, in order"
  },
  content: {
    name: "content-is-assembled",
    spec: "L-22",
    text: "the recorded content is what the step's chunks assemble to, verbatim"
  },
  maxTokensDropsToolCalls: {
    name: "max-tokens-drops-tool-calls",
    spec: "L-12.11",
    text: "a max-tokens step records no tool calls"
  },
  replayState: {
    name: "replay-state-only-unchanged",
    spec: "C-7, L-22",
    text: "replay state is kept exactly when the recorded content equals the assembled content"
  },
  usage: {
    name: "usage-is-last-usage-chunk",
    spec: "A-9, L-22",
    text: "the recorded usage is the step's last usage chunk"
  },
  provenance: {
    name: "provenance-is-request-route",
    spec: "L-22, S-20",
    text: "the provenance names the provider and model of the step's request header"
  },
  assemblable: {
    name: "chunks-assemble",
    spec: "A-8",
    text: "a recorded message's chunks assemble (no open block of an unknown kind)"
  },
  turnMaxTokens: {
    name: "turn-max-tokens",
    spec: "L-30",
    text: "a turn ends max-tokens exactly when one of its recorded steps finished max-tokens"
  }
} as const satisfies Record<string, Rule>

/**
 * The assistant message payload the loop records.
 *
 * @since 0.1.0
 * @category models
 */
export type MessageData = SessionEventMap["assistant/message"]

/**
 * A finished stream as the rule sees it: the assembled response plus the canonical JSON of its
 * blocks, taken once before `step-result` can see a copy of them.
 *
 * @since 0.1.0
 * @category models
 */
export interface Response {
  readonly blocks: ReadonlyArray<ContentBlock>
  readonly finish: FinishReason
  readonly usage: TokenUsage | undefined
  readonly replayState: Json.Json | undefined
  /** canonical JSON of `blocks` */
  readonly canonical: string
}

/**
 * The rule's view of an assembled stream.
 *
 * @since 0.1.0
 * @category constructors
 */
export const response = (assembled: BlockAssembler.Assembled): Response => ({
  blocks: assembled.blocks,
  finish: assembled.finish,
  usage: assembled.usage,
  replayState: assembled.replayState,
  // assembled blocks are JSON by construction; were they not, "" never equals a canonical text (no replay state kept)
  canonical: Result.match(Json.copyJson(assembled.blocks), { onFailure: () => "", onSuccess: Json.canonical })
})

/**
 * Why a finished stream goes to request recovery instead of being recorded (rule 1), or
 * `undefined` when it is recorded.
 *
 * @since 0.1.0
 * @category rules
 */
export const requestFailure = (
  finish: FinishReason
): { readonly message: string; readonly code?: string } | undefined => {
  if (finish.kind === "error") {
    return finish.code === undefined ? { message: finish.message } : { message: finish.message, code: finish.code }
  }
  if (finish.kind === "aborted") return { message: "model stream aborted", code: "ABORTED" }
  return undefined
}

/**
 * `true` when the step finished at the output token limit (rules 2 and 7; the turn becomes
 * `max-tokens`, L-30).
 *
 * @since 0.1.0
 * @category rules
 */
export const isMaxTokens = (finish: FinishReason): boolean => finish.kind === "max-tokens"

const isToolCall = (block: ContentBlock): block is ToolCallBlock => block.type === "tool-call"

const withoutToolCalls = (content: ReadonlyArray<ContentBlock>): ReadonlyArray<ContentBlock> =>
  content.some(isToolCall) ? content.filter((b) => !isToolCall(b)) : content

/**
 * The content `step-result` is offered (rule 2): the assembled blocks, without tool calls when the
 * step finished max-tokens.
 *
 * @since 0.1.0
 * @category rules
 */
export const offered = (r: Response): ReadonlyArray<ContentBlock> =>
  isMaxTokens(r.finish) ? withoutToolCalls(r.blocks) : r.blocks

/**
 * The content recorded from what `step-result` returned (rules 2 and 3): verbatim, without tool
 * calls again when the step finished max-tokens.
 *
 * @since 0.1.0
 * @category rules
 */
export const recordedContent = (r: Response, returned: ReadonlyArray<ContentBlock>): ReadonlyArray<ContentBlock> =>
  isMaxTokens(r.finish) ? withoutToolCalls(returned) : returned

/**
 * `true` when the recorded content keeps the stream's replay state (rule 4): there is one and the
 * content deep-equals the assembled content.
 *
 * @since 0.1.0
 * @category rules
 */
export const keepsReplayState = (r: Response, content: ReadonlyArray<ContentBlock>): boolean =>
  r.replayState !== undefined && Json.isJson(content) && Json.canonical(content) === r.canonical

/**
 * The `assistant/message` payload for a recorded step (rules 3..5), given the content after
 * `step-result`.
 *
 * @since 0.1.0
 * @category rules
 */
export const message = (input: {
  readonly turn: number
  readonly step: number
  readonly response: Response
  readonly returned: ReadonlyArray<ContentBlock>
  readonly route: { readonly provider: string; readonly model: string }
}): MessageData => {
  const r = input.response
  const content = recordedContent(r, input.returned)
  const base: Provenance = { provider: input.route.provider, model: input.route.model }
  const provenance: Provenance = keepsReplayState(r, content) && r.replayState !== undefined
    ? { ...base, replayState: r.replayState }
    : base
  return {
    turn: input.turn,
    step: input.step,
    content,
    provenance,
    ...(r.usage === undefined ? {} : { usage: r.usage })
  }
}

/**
 * The payload recorded when `step-result` fails (rule 6): `content: []`, usage kept, no replay
 * state.
 *
 * @since 0.1.0
 * @category rules
 */
export const anchor = (input: {
  readonly turn: number
  readonly step: number
  readonly response: Response
  readonly route: { readonly provider: string; readonly model: string }
}): MessageData => ({
  turn: input.turn,
  step: input.step,
  content: [],
  provenance: { provider: input.route.provider, model: input.route.model },
  ...(input.response.usage === undefined ? {} : { usage: input.response.usage })
})

/**
 * The payload the loop records for a stream when no `step-result` listener rewrites it: what a
 * verifier expects to find in the log.
 *
 * @since 0.1.0
 * @category rules
 */
export const expected = (input: {
  readonly turn: number
  readonly step: number
  readonly response: Response
  readonly route: { readonly provider: string; readonly model: string }
}): MessageData => message({ ...input, returned: offered(input.response) })

/**
 * The tool calls the loop executes after recording (rule 7): the recorded message's, none for a
 * max-tokens step.
 *
 * @since 0.1.0
 * @category rules
 */
export const callsToRun = (finish: FinishReason, recorded: ReadonlyArray<ContentBlock>): ReadonlyArray<ToolCallBlock> =>
  isMaxTokens(finish) ? [] : recorded.filter(isToolCall)
