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
 *   later `block-end`s and deltas for it are ignored;
 * - an open tool call without id gets `call-<index>`, without name `""`; an open block of a
 *   kind deltas cannot build fails with {@link LlmError.AssemblyError} naming the kind;
 * - usage = last usage chunk, finish = last finish (default `{kind: "stop"}`), replay state = the
 *   last finish chunk's; an unknown chunk type is a defect.
 *
 * The fold runs on a mutable {@link Builder} (O(1) per chunk, whatever the number of blocks); {@link State} values
 * are immutable snapshots made on demand, so states from `step` and `scan` stay valid.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
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

/** Indexes below this bound live in the builder's dense array (providers number blocks from 0). */
const DENSE_LIMIT = 1 << 16

const isDense = (index: number): boolean => Number.isInteger(index) && index >= 0 && index < DENSE_LIMIT

/** A slot as the builder holds it: open slots are mutated in place while deltas arrive. */
type MutableSlot =
  | { _tag: "Open"; readonly index: number; readonly kind: string; buffer: string; id: string; name: string }
  | { readonly _tag: "Closed"; readonly index: number; readonly block: ContentBlock.ContentBlock }

/**
 * The assembler's working form: a mutable builder whose cost per chunk is O(1) whatever the number of blocks
 * (issue 17). Every way of folding chunks goes through {@link Builder.add}, so there is one implementation of the
 * rules; immutable {@link State} snapshots are made only when a consumer asks for one ({@link Builder.snapshot}:
 * the end of a fold, or each step of a {@link scan} view).
 *
 * @since 0.1.0
 * @category folding
 */
export class Builder {
  private readonly slots: Array<MutableSlot> = []
  /** wire index -> position in `slots`: a dense array for the small indexes every provider uses (a `Map` lookup
   * costs several times more once thousands of blocks are open), a `Map` for anything else. */
  private readonly dense: Array<number> = []
  private readonly sparse = new Map<number, number>()
  private usage: Message.TokenUsage | undefined = undefined
  private finish: Message.FinishReason | undefined = undefined
  private replayState: Json.Json | undefined = undefined
  private chunks = 0

  /** A builder continuing from a snapshot (copies it: the snapshot stays valid). */
  static from(state: State): Builder {
    const builder = new Builder()
    for (const slot of state.slots) {
      builder.setPosition(slot.index, builder.slots.length)
      builder.slots.push(slot._tag === "Open" ? { ...slot } : slot)
    }
    builder.usage = state.usage
    builder.finish = state.finish
    builder.replayState = state.replayState
    builder.chunks = state.chunks
    return builder
  }

  /**
   * Folds one chunk in place; returns false when the rules ignore it, which leaves the builder
   * untouched. Throws (a defect) on a chunk type outside the closed protocol (A-10, V-3).
   */
  add(chunk: StreamChunk.StreamChunk): boolean {
    switch (chunk.type) {
      case "block-start": {
        if (this.position(chunk.index) !== undefined) return false
        this.open(chunk.index, chunk.blockType)
        break
      }
      case "text-delta":
      case "reasoning-delta": {
        const slot = this.slotFor(chunk.index, chunk.type === "text-delta" ? "text" : "reasoning")
        if (slot._tag === "Closed") return false
        slot.buffer += chunk.text
        break
      }
      case "tool-call-delta": {
        const slot = this.slotFor(chunk.index, "tool-call")
        if (slot._tag === "Closed") return false
        slot.buffer += chunk.argumentsDelta
        if (chunk.id !== "") slot.id = chunk.id
        if (chunk.name !== undefined && chunk.name !== "") slot.name = chunk.name
        break
      }
      case "block-end": {
        const position = this.position(chunk.index)
        const closed: MutableSlot = { _tag: "Closed", index: chunk.index, block: chunk.block }
        if (position === undefined) {
          this.setPosition(chunk.index, this.slots.length)
          this.slots.push(closed)
        } else if (this.slots[position]!._tag === "Open") {
          this.slots[position] = closed
        } else {
          return false
        }
        break
      }
      case "usage":
        this.usage = chunk.usage
        break
      case "finish":
        this.finish = chunk.reason
        this.replayState = chunk.replayState
        break
      default: {
        const unknown: never = chunk
        throw new Error(`BlockAssembler: unknown chunk type ${JSON.stringify((unknown as { type?: unknown }).type)}`)
      }
    }
    this.chunks++
    return true
  }

  /** Folds every chunk of an iterable in place; returns the builder. */
  addAll(chunks: Iterable<StreamChunk.StreamChunk>): this {
    for (const chunk of chunks) this.add(chunk)
    return this
  }

  /** An immutable snapshot of the fold so far (O(blocks)); later chunks do not change it. */
  snapshot(): State {
    const slots: Array<Slot> = new Array(this.slots.length)
    const positions = new Map<number, number>()
    for (let i = 0; i < this.slots.length; i++) {
      const slot = this.slots[i]!
      slots[i] = slot._tag === "Open" ? { ...slot } : slot
      positions.set(slot.index, i)
    }
    return {
      slots,
      positions,
      usage: this.usage,
      finish: this.finish,
      replayState: this.replayState,
      chunks: this.chunks
    }
  }

  private position(index: number): number | undefined {
    return isDense(index) ? this.dense[index] : this.sparse.get(index)
  }

  private setPosition(index: number, position: number): void {
    if (isDense(index)) this.dense[index] = position
    else this.sparse.set(index, position)
  }

  private open(index: number, kind: string): MutableSlot {
    const slot: MutableSlot = { _tag: "Open", index, kind, buffer: "", id: "", name: "" }
    this.setPosition(index, this.slots.length)
    this.slots.push(slot)
    return slot
  }

  private slotFor(index: number, kind: string): MutableSlot {
    const position = this.position(index)
    return position === undefined ? this.open(index, kind) : this.slots[position]!
  }
}

/**
 * Folds one chunk onto a snapshot, returning a new snapshot (the persistent form, O(blocks) per call: use a
 * {@link Builder} or {@link sink} on hot paths); a chunk the rules ignore returns `state` itself. Throws (a defect) on a chunk type outside the closed protocol
 * (A-10, V-3).
 *
 * @since 0.1.0
 * @category folding
 */
export const step = (state: State, chunk: StreamChunk.StreamChunk): State => {
  const builder = Builder.from(state)
  return builder.add(chunk) ? builder.snapshot() : state
}

/**
 * Folds every chunk of an iterable with one builder (O(1) per chunk) and returns the final snapshot.
 *
 * @since 0.1.0
 * @category folding
 */
export const foldAll = (chunks: Iterable<StreamChunk.StreamChunk>, from: State = initial): State =>
  Builder.from(from).addAll(chunks).snapshot()

const buildSlot = (slot: Slot): Result.Result<ContentBlock.ContentBlock, AssemblyError> => {
  if (slot._tag === "Closed") return Result.succeed(slot.block)
  switch (slot.kind) {
    case "text":
      return Result.succeed(ContentBlock.text(slot.buffer))
    case "reasoning":
      return Result.succeed(ContentBlock.reasoning(slot.buffer))
    case "tool-call":
      return Result.succeed(
        ContentBlock.toolCall(slot.id === "" ? `call-${slot.index}` : slot.id, slot.name, slot.buffer)
      )
    default:
      return Result.fail(
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
export const blocks = (state: State): Result.Result<ReadonlyArray<ContentBlock.ContentBlock>, AssemblyError> => {
  const out: Array<ContentBlock.ContentBlock> = []
  for (const slot of state.slots) {
    const built = buildSlot(slot)
    if (Result.isFailure(built)) return Result.fail(built.failure)
    out.push(built.success)
  }
  return Result.succeed(out)
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
    if (Result.isSuccess(built)) out.push(built.success)
  }
  return out
}

/**
 * Finishes a fold: blocks, usage, finish (default stop), replay state and the assistant message.
 *
 * @since 0.1.0
 * @category reading
 */
export const assemble = (state: State): Result.Result<Assembled, AssemblyError> =>
  Result.map(blocks(state), (blocks) => ({
    blocks,
    usage: state.usage,
    finish: state.finish ?? { kind: "stop" },
    replayState: state.replayState,
    message: { role: "assistant", content: blocks },
    chunks: state.chunks
  }))

/** A fresh builder per run of a sink, fed one stream `Chunk` at a time (no per-element Effect overhead). */
const builderSink: Sink.Sink<Builder, StreamChunk.StreamChunk> = Sink.suspend(() =>
  Sink.reduceArray(() => new Builder(), (builder: Builder, chunk: ReadonlyArray<StreamChunk.StreamChunk>) =>
    builder.addAll(chunk))
)

/**
 * The assembler as a `Sink`: folds a whole chunk stream into an {@link Assembled} response, O(1) per chunk.
 *
 * @since 0.1.0
 * @category sinks
 */
export const sink: Sink.Sink<Assembled, StreamChunk.StreamChunk, never, AssemblyError> = builderSink.pipe(
  Sink.mapEffect((builder) => Effect.suspend(() => Effect.fromResult(assemble(builder.snapshot()))))
)

/**
 * The raw fold as a `Sink` (returns the final {@link State}, never fails).
 *
 * @since 0.1.0
 * @category sinks
 */
export const stateSink: Sink.Sink<State, StreamChunk.StreamChunk> = builderSink.pipe(
  Sink.map((builder) => builder.snapshot())
)


/**
 * Incremental view: every intermediate state of the fold, starting with {@link initial}. One builder per run;
 * each emitted state is a snapshot (O(blocks)), made because the consumer asked for every state.
 *
 * @since 0.1.0
 * @category combinators
 */
export const scan = <E, R>(
  chunks: Stream.Stream<StreamChunk.StreamChunk, E, R>
): Stream.Stream<State, E, R> =>
  Stream.suspend(() => {
    const builder = new Builder()
    let current = initial
    return Stream.concat(
      Stream.succeed(initial),
      Stream.map(chunks, (chunk) => {
        if (builder.add(chunk)) current = builder.snapshot()
        return current
      })
    )
  })
