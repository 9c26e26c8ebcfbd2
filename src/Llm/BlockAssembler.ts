/**
 * The ONE block assembler (§3, A-1..A-11): a pure fold `step(state, chunk)` over the chunk
 * protocol, lifted into a `Sink` for whole-response consumers and into `Stream.scan` for live views.
 *
 * Tolerance, exactly as the spec asks:
 * - blocks come out in first-seen index order; a repeated `block-start` is ignored;
 * - delta-only streams work: a delta for an unseen index opens a block of its kind;
 * - text/reasoning deltas concatenate; a tool-call delta sets the id when non-empty, the name when
 *   non-empty, and appends the argument fragment; a delta of another kind than the block's
 *   appends to the same buffer (the first recorded kind sticks);
 * - the FIRST `block-end` for an index fixes it, overriding deltas (even of another kind), and
 *   later `block-end`s and deltas for it are ignored: a flood of late deltas returns the
 *   same state object and allocates nothing;
 * - an open tool call without id gets `call-<index>`, without name `""`; an open block of a
 *   kind deltas cannot build fails with {@link LlmError.AssemblyError} naming the kind;
 * - usage = last usage chunk, finish = last finish (default `{kind: "stop"}`), replay state = the
 *   last finish chunk's; an unknown chunk type is a defect.
 *
 * State is persistent (never mutated), so intermediate states from `scan` stay valid snapshots.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Sink from "effect/Sink"
import * as Stream from "effect/Stream"
import * as ContentBlock from "./ContentBlock.js"
import type * as Json from "./Json.js"
import { AssemblyError } from "./LlmError.js"
import type * as Message from "./Message.js"
import type * as StreamChunk from "./StreamChunk.js"

/**
 * One block slot: still assembling from deltas, or fixed by its first `block-end`.
 *
 * @since 0.1.0
 * @category models
 */
export type Slot =
  | {
    readonly _tag: "Open"
    readonly index: number
    readonly kind: string
    /** text of text/reasoning blocks, argument text of tool calls */
    readonly buffer: string
    readonly id: string
    readonly name: string
  }
  | { readonly _tag: "Closed"; readonly index: number; readonly block: ContentBlock.ContentBlock }

/**
 * The fold state.
 *
 * @since 0.1.0
 * @category models
 */
export interface State {
  /** slots in first-seen order */
  readonly slots: ReadonlyArray<Slot>
  /** wire index → position in `slots` */
  readonly positions: ReadonlyMap<number, number>
  readonly usage: Message.TokenUsage | undefined
  readonly finish: Message.FinishReason | undefined
  readonly replayState: Json.Json | undefined
  /** number of chunks folded */
  readonly chunks: number
}

/**
 * The empty state.
 *
 * @since 0.1.0
 * @category constructors
 */
export const initial: State = {
  slots: [],
  positions: new Map(),
  usage: undefined,
  finish: undefined,
  replayState: undefined,
  chunks: 0
}

/**
 * The assembled response.
 *
 * @since 0.1.0
 * @category models
 */
export interface Assembled {
  readonly blocks: ReadonlyArray<ContentBlock.ContentBlock>
  readonly usage: Message.TokenUsage | undefined
  readonly finish: Message.FinishReason
  readonly replayState: Json.Json | undefined
  /** the assistant message over `blocks` (no provenance: the caller knows the route) */
  readonly message: Message.Message
  /** number of chunks folded */
  readonly chunks: number
}

const openSlot = (index: number, kind: string): Slot => ({ _tag: "Open", index, kind, buffer: "", id: "", name: "" })

const withSlot = (state: State, index: number, slot: Slot): State => {
  const position = state.positions.get(index)
  if (position === undefined) {
    const positions = new Map(state.positions)
    positions.set(index, state.slots.length)
    return { ...state, slots: [...state.slots, slot], positions, chunks: state.chunks + 1 }
  }
  const slots = state.slots.slice()
  slots[position] = slot
  return { ...state, slots, chunks: state.chunks + 1 }
}

const slotAt = (state: State, index: number): Slot | undefined => {
  const position = state.positions.get(index)
  return position === undefined ? undefined : state.slots[position]
}

const appendText = (state: State, index: number, kind: string, text: string): State => {
  const slot = slotAt(state, index) ?? openSlot(index, kind)
  if (slot._tag === "Closed") return state
  return withSlot(state, index, { ...slot, buffer: slot.buffer + text })
}

/**
 * Folds one chunk. Pure: returns a new state (or the same one when the chunk is ignored).
 * Throws (a defect) on a chunk type outside the closed protocol (A-10, V-3).
 *
 * @since 0.1.0
 * @category folding
 */
export const step = (state: State, chunk: StreamChunk.StreamChunk): State => {
  switch (chunk.type) {
    case "block-start": {
      if (state.positions.has(chunk.index)) return state
      return withSlot(state, chunk.index, openSlot(chunk.index, chunk.blockType))
    }
    case "text-delta":
      return appendText(state, chunk.index, "text", chunk.text)
    case "reasoning-delta":
      return appendText(state, chunk.index, "reasoning", chunk.text)
    case "tool-call-delta": {
      const slot = slotAt(state, chunk.index) ?? openSlot(chunk.index, "tool-call")
      if (slot._tag === "Closed") return state
      return withSlot(state, chunk.index, {
        ...slot,
        buffer: slot.buffer + chunk.argumentsDelta,
        id: chunk.id === "" ? slot.id : chunk.id,
        name: chunk.name === undefined || chunk.name === "" ? slot.name : chunk.name
      })
    }
    case "block-end": {
      const slot = slotAt(state, chunk.index)
      if (slot !== undefined && slot._tag === "Closed") return state
      return withSlot(state, chunk.index, { _tag: "Closed", index: chunk.index, block: chunk.block })
    }
    case "usage":
      return { ...state, usage: chunk.usage, chunks: state.chunks + 1 }
    case "finish":
      return { ...state, finish: chunk.reason, replayState: chunk.replayState, chunks: state.chunks + 1 }
    default: {
      const unknown: never = chunk
      throw new Error(`BlockAssembler: unknown chunk type ${JSON.stringify((unknown as { type?: unknown }).type)}`)
    }
  }
}

/**
 * Folds every chunk of an array with a plain loop (the reference the Sink is benchmarked against).
 *
 * @since 0.1.0
 * @category folding
 */
export const foldAll = (chunks: Iterable<StreamChunk.StreamChunk>, from: State = initial): State => {
  let state = from
  for (const chunk of chunks) state = step(state, chunk)
  return state
}

const buildSlot = (slot: Slot): Either.Either<ContentBlock.ContentBlock, AssemblyError> => {
  if (slot._tag === "Closed") return Either.right(slot.block)
  switch (slot.kind) {
    case "text":
      return Either.right(ContentBlock.text(slot.buffer))
    case "reasoning":
      return Either.right(ContentBlock.reasoning(slot.buffer))
    case "tool-call":
      return Either.right(
        ContentBlock.toolCall(slot.id === "" ? `call-${slot.index}` : slot.id, slot.name, slot.buffer)
      )
    default:
      return Either.left(
        new AssemblyError({
          code: "UNASSEMBLABLE_BLOCK",
          index: slot.index,
          kind: slot.kind,
          message: `cannot assemble open block ${slot.index} of kind "${slot.kind}" from deltas`
        })
      )
  }
}

/**
 * Reads the blocks of a state (idempotent). Fails naming the kind of an unassemblable open block.
 *
 * @since 0.1.0
 * @category reading
 */
export const blocks = (state: State): Either.Either<ReadonlyArray<ContentBlock.ContentBlock>, AssemblyError> => {
  const out: Array<ContentBlock.ContentBlock> = []
  for (const slot of state.slots) {
    const built = buildSlot(slot)
    if (Either.isLeft(built)) return Either.left(built.left)
    out.push(built.right)
  }
  return Either.right(out)
}

/**
 * The blocks that can be read so far, skipping unassemblable ones: for live views.
 *
 * @since 0.1.0
 * @category reading
 */
export const partialBlocks = (state: State): ReadonlyArray<ContentBlock.ContentBlock> => {
  const out: Array<ContentBlock.ContentBlock> = []
  for (const slot of state.slots) {
    const built = buildSlot(slot)
    if (Either.isRight(built)) out.push(built.right)
  }
  return out
}

/**
 * Finishes a fold: blocks, usage, finish (default stop), replay state and the assistant message.
 *
 * @since 0.1.0
 * @category reading
 */
export const assemble = (state: State): Either.Either<Assembled, AssemblyError> =>
  Either.map(blocks(state), (blocks) => ({
    blocks,
    usage: state.usage,
    finish: state.finish ?? { kind: "stop" },
    replayState: state.replayState,
    message: { role: "assistant", content: blocks },
    chunks: state.chunks
  }))

/**
 * The assembler as a `Sink`: folds a whole chunk stream into an {@link Assembled} response.
 * Folds each `Chunk` of the stream with a plain loop (no per-element Effect overhead).
 *
 * @since 0.1.0
 * @category sinks
 */
export const sink: Sink.Sink<Assembled, StreamChunk.StreamChunk, never, AssemblyError> = Sink.foldLeftChunks(
  initial,
  (state: State, chunk: Iterable<StreamChunk.StreamChunk>) => foldAll(chunk, state)
).pipe(Sink.mapEffect((state) => Effect.suspend(() => assemble(state))))

/**
 * The raw fold as a `Sink` (returns the final {@link State}, never fails).
 *
 * @since 0.1.0
 * @category sinks
 */
export const stateSink: Sink.Sink<State, StreamChunk.StreamChunk> = Sink.foldLeftChunks(
  initial,
  (state: State, chunk: Iterable<StreamChunk.StreamChunk>) => foldAll(chunk, state)
)

/**
 * Incremental view: every intermediate state of the fold, starting with {@link initial}.
 *
 * @since 0.1.0
 * @category combinators
 */
export const scan = <E, R>(
  chunks: Stream.Stream<StreamChunk.StreamChunk, E, R>
): Stream.Stream<State, E, R> => Stream.scan(chunks, initial, step)
