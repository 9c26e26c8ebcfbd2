import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Exit from "effect/Exit"
import * as Stream from "effect/Stream"
import * as BlockAssembler from "../../src/Llm/BlockAssembler.js"
import * as ContentBlock from "../../src/Llm/ContentBlock.js"
import { AssemblyError } from "../../src/Llm/LlmError.js"
import * as StreamChunk from "../../src/Llm/StreamChunk.js"
import * as fc from "./arb.js"

const S = StreamChunk

const assemble = (chunks: ReadonlyArray<StreamChunk.StreamChunk>, batch = 3) =>
  Stream.run(Stream.fromIterable(chunks).pipe(Stream.rechunk(batch)), BlockAssembler.sink)

const blocksOf = (chunks: ReadonlyArray<StreamChunk.StreamChunk>) =>
  Result.getOrThrow(BlockAssembler.blocks(BlockAssembler.foldAll(chunks)))

describe("BlockAssembler", () => {
  it.effect("AC-8 [A-1,A-4] closed reasoning, open text, open tool call (name only on the first delta) → three blocks; usage/finish as sent", () =>
    Effect.gen(function*() {
      const result = yield* assemble([
        S.blockStart(0, "reasoning"),
        S.reasoningDelta(0, "thinking"),
        S.blockEnd(0, ContentBlock.reasoning("thinking")),
        S.blockStart(1, "text"),
        S.textDelta(1, "Hello"),
        S.textDelta(1, " world"),
        S.toolCallDelta(2, "c1", "{\"text\":", "echo"),
        S.toolCallDelta(2, "c1", "\"hi\"}"),
        S.usage({ inputTokens: 3, outputTokens: 4, reasoningTokens: 1 }),
        S.finish({ kind: "tool-calls" })
      ])
      expect(result.blocks).toEqual([
        ContentBlock.reasoning("thinking"),
        ContentBlock.text("Hello world"),
        ContentBlock.toolCall("c1", "echo", "{\"text\":\"hi\"}")
      ])
      expect(result.usage).toEqual({ inputTokens: 3, outputTokens: 4, reasoningTokens: 1 })
      expect(result.finish).toEqual({ kind: "tool-calls" })
      expect(result.replayState).toBeUndefined()
      expect(result.message).toEqual({ role: "assistant", content: result.blocks })
      expect(result.chunks).toBe(10)
    }))

  it.effect("AC-9 [A-3,A-11] delta-only stream opens a text block; empty stream has no blocks", () =>
    Effect.gen(function*() {
      const one = yield* Stream.run(Stream.make(StreamChunk.textDelta(0, "implicit")), BlockAssembler.sink)
      expect(one.blocks).toEqual([{ type: "text", text: "implicit" }])
      expect(one.finish).toEqual({ kind: "stop" })
      expect(one.usage).toBeUndefined()
      const empty = yield* Stream.run(Stream.empty, BlockAssembler.sink)
      expect(empty.blocks).toEqual([])
      expect(empty.finish).toEqual({ kind: "stop" })
      expect(empty.usage).toBeUndefined()
      expect(empty.replayState).toBeUndefined()
      // a delta-only reasoning block and a delta-only tool call
      const more = yield* assemble([S.reasoningDelta(0, "r"), S.toolCallDelta(1, "id", "{}", "t")])
      expect(more.blocks).toEqual([ContentBlock.reasoning("r"), ContentBlock.toolCall("id", "t", "{}")])
    }))

  it.effect("AC-10 [A-2] start, \"one\", repeated start (even of another kind), \" two\", end \"one two\" → one block", () =>
    Effect.gen(function*() {
      const result = yield* assemble([
        S.blockStart(0, "text"),
        S.textDelta(0, "one"),
        S.blockStart(0, "reasoning"),
        S.textDelta(0, " two"),
        S.blockEnd(0, ContentBlock.text("one two"))
      ])
      expect(result.blocks).toEqual([ContentBlock.text("one two")])
      // without the block-end: the first recorded kind sticks
      expect(blocksOf([S.blockStart(0, "text"), S.textDelta(0, "one"), S.blockStart(0, "reasoning"), S.textDelta(0, " two")]))
        .toEqual([ContentBlock.text("one two")])
    }))

  it.effect("AC-11 [A-6] a delta (with name \"evil\") after a tool call's block-end leaves it unchanged and allocates nothing", () =>
    Effect.gen(function*() {
      const closed = BlockAssembler.foldAll([
        S.toolCallDelta(0, "c1", "{}", "good"),
        S.blockEnd(0, ContentBlock.toolCall("c1", "good", "{}"))
      ])
      const late = S.toolCallDelta(0, "c2", "{\"x\":1}", "evil")
      expect(BlockAssembler.step(closed, late)).toBe(closed)
      expect(BlockAssembler.step(closed, S.textDelta(0, "more"))).toBe(closed)
      const result = yield* assemble([
        S.toolCallDelta(0, "c1", "{}", "good"),
        S.blockEnd(0, ContentBlock.toolCall("c1", "good", "{}")),
        late
      ])
      expect(result.blocks).toEqual([ContentBlock.toolCall("c1", "good", "{}")])
    }))

  it.effect("AC-12 [A-5] block-ends reasoning \"first\" then text \"second\" on index 0 → [reasoning first]; block-end \"X\" after deltas \"abc\" → \"X\"", () =>
    Effect.gen(function*() {
      const first = yield* assemble([
        S.blockEnd(0, ContentBlock.reasoning("first")),
        S.blockEnd(0, ContentBlock.text("second"))
      ])
      expect(first.blocks).toEqual([ContentBlock.reasoning("first")])
      const overriding = yield* assemble([
        S.textDelta(0, "a"),
        S.textDelta(0, "b"),
        S.textDelta(0, "c"),
        S.blockEnd(0, ContentBlock.text("X"))
      ])
      expect(overriding.blocks).toEqual([ContentBlock.text("X")])
      // block-end overrides deltas even of another kind, and opens unseen indexes in order
      const kinds = yield* assemble([
        S.textDelta(1, "abc"),
        S.blockEnd(1, ContentBlock.toolCall("t", "n", "{}")),
        S.blockEnd(0, ContentBlock.text("zero"))
      ])
      expect(kinds.blocks).toEqual([ContentBlock.toolCall("t", "n", "{}"), ContentBlock.text("zero")])
    }))

  it.effect("AC-13 [A-7] a tool-call delta without id or name, args {} → {id call-0, name \"\", arguments \"{}\"}; the latest id wins", () =>
    Effect.gen(function*() {
      const result = yield* assemble([S.toolCallDelta(0, "", "{}")])
      expect(result.blocks).toEqual([{ type: "tool-call", id: "call-0", name: "", arguments: "{}" }])
      const latest = yield* assemble([
        S.blockStart(3, "tool-call"),
        S.toolCallDelta(3, "first", "{", "n1"),
        S.toolCallDelta(3, "second", "}", ""),
        S.toolCallDelta(3, "", "")
      ])
      expect(latest.blocks).toEqual([ContentBlock.toolCall("second", "n1", "{}")])
    }))

  it.effect("AC-14 [A-8,A-10] an open block of an unknown kind fails reading, naming it; an unknown chunk type is a defect", () =>
    Effect.gen(function*() {
      const unknownKind = "image" as ContentBlock.ContentBlock["type"]
      const error = yield* Effect.flip(assemble([S.textDelta(0, "ok"), S.blockStart(1, unknownKind)]))
      expect(error).toBeInstanceOf(AssemblyError)
      expect(error).toMatchObject({ code: "UNASSEMBLABLE_BLOCK", index: 1, kind: "image" })
      expect(error.message).toContain("image")
      // closed by a block-end, an extension block passes through
      const extension = { type: "image", url: "u" } as unknown as ContentBlock.ContentBlock
      const closed = yield* assemble([S.blockStart(0, unknownKind), S.blockEnd(0, extension)])
      expect(closed.blocks).toEqual([extension])
      // partialBlocks skips what cannot be read
      expect(BlockAssembler.partialBlocks(BlockAssembler.foldAll([S.textDelta(0, "ok"), S.blockStart(1, unknownKind)])))
        .toEqual([ContentBlock.text("ok")])

      const bogus = { type: "bogus", index: 0 } as unknown as StreamChunk.StreamChunk
      const exit = yield* Effect.exit(assemble([S.textDelta(0, "a"), bogus]))
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isFailure(exit)) {
        expect(Cause.hasDies(exit.cause)).toBe(true)
        expect(Cause.findErrorOption(exit.cause)._tag).toBe("None")
        expect(String(Cause.squash(exit.cause))).toContain("bogus")
      }
    }))

  it.effect("AC-15 [A-9] two finishes → the last wins (its missing replay state ⇒ undefined); last usage wins", () =>
    Effect.gen(function*() {
      const result = yield* assemble([
        S.usage({ inputTokens: 1, outputTokens: 1 }),
        S.finish({ kind: "stop" }, { sig: "s" }),
        S.usage({ inputTokens: 2, outputTokens: 2 }),
        S.finish({ kind: "max-tokens" })
      ])
      expect(result.finish).toEqual({ kind: "max-tokens" })
      expect(result.replayState).toBeUndefined()
      expect(result.usage).toEqual({ inputTokens: 2, outputTokens: 2 })
      const withState = yield* assemble([S.finish({ kind: "error", message: "m" }), S.finish({ kind: "stop" }, { sig: "t" })])
      expect(withState.finish).toEqual({ kind: "stop" })
      expect(withState.replayState).toEqual({ sig: "t" })
    }))

  it.effect("AC-16 [A-1,A-11] indexes first seen 2, 0, 1 → blocks in that order", () =>
    Effect.gen(function*() {
      const result = yield* assemble([
        S.textDelta(2, "two"),
        S.blockStart(0, "reasoning"),
        S.toolCallDelta(1, "c", "{}", "one"),
        S.reasoningDelta(0, "zero"),
        S.textDelta(2, "!")
      ])
      expect(result.blocks).toEqual([
        ContentBlock.text("two!"),
        ContentBlock.reasoning("zero"),
        ContentBlock.toolCall("c", "one", "{}")
      ])
    }))

  it.effect("[A-10] scan yields every intermediate state, starting with the initial one; they stay valid snapshots", () =>
    Effect.gen(function*() {
      const states = yield* Stream.runCollect(BlockAssembler.scan(Stream.make(S.textDelta(0, "a"), S.textDelta(0, "b"))))
      expect(states).toHaveLength(3)
      expect(states[0]).toBe(BlockAssembler.initial)
      expect(states.map(BlockAssembler.partialBlocks)).toEqual([[], [ContentBlock.text("a")], [ContentBlock.text("ab")]])
    }))
})

// ---------------------------------------------------------------------------------------------
// Properties

type Plain = ContentBlock.TextBlock | ContentBlock.ReasoningBlock | ContentBlock.ToolCallBlock

const blockArb: fc.Arb<Plain> = fc.oneof<Plain>(
  fc.record({ type: fc.constant("text" as const), text: fc.fullUnicodeString({ maxLength: 30 }) }),
  fc.record({ type: fc.constant("reasoning" as const), text: fc.fullUnicodeString({ maxLength: 30 }) }),
  fc.record({
    type: fc.constant("tool-call" as const),
    id: fc.map(fc.string({ minLength: 1, maxLength: 8 }), ContentBlock.callId),
    name: fc.string({ minLength: 1, maxLength: 8 }),
    arguments: fc.json({ maxDepth: 2 })
  })
)

/** Cuts a string at the given (sorted, deduplicated) positions: pieces that concatenate to it. */
const cut = (s: string, at: ReadonlyArray<number>): ReadonlyArray<string> => {
  const points = [...new Set(at.map((p) => p % (s.length + 1)))].sort((a, b) => a - b)
  const out: Array<string> = []
  let from = 0
  for (const p of points) {
    out.push(s.slice(from, p))
    from = p
  }
  out.push(s.slice(from))
  return out
}

/** The chunks of one block at `index`: optional start, deltas of the cut content, optional end. */
const blockChunks = (
  block: Plain,
  index: number,
  cuts: ReadonlyArray<number>,
  withStart: boolean,
  withEnd: boolean
): ReadonlyArray<StreamChunk.StreamChunk> => {
  const out: Array<StreamChunk.StreamChunk> = []
  if (withStart) out.push(S.blockStart(index, block.type))
  if (block.type === "tool-call") {
    cut(block.arguments, cuts).forEach((piece, i) =>
      out.push(i === 0 ? S.toolCallDelta(index, block.id, piece, block.name) : S.toolCallDelta(index, block.id, piece))
    )
  } else {
    for (const piece of cut(block.text, cuts)) {
      out.push(block.type === "text" ? S.textDelta(index, piece) : S.reasoningDelta(index, piece))
    }
  }
  if (withEnd) out.push(S.blockEnd(index, block))
  return out
}

/**
 * Interleaves per-block chunk lists: any order that keeps each block's own order and first
 * mentions blocks in list order (so first-seen order = block order).
 */
const interleave = (
  lists: ReadonlyArray<ReadonlyArray<StreamChunk.StreamChunk>>,
  choices: ReadonlyArray<number>
): ReadonlyArray<StreamChunk.StreamChunk> => {
  const positions = lists.map(() => 0)
  const out: Array<StreamChunk.StreamChunk> = []
  let started = 0
  let step = 0
  for (;;) {
    const candidates: Array<number> = []
    for (let k = 0; k < Math.min(started + 1, lists.length); k++) {
      if ((positions[k] as number) < (lists[k] as ReadonlyArray<StreamChunk.StreamChunk>).length) candidates.push(k)
    }
    if (candidates.length === 0) {
      if (started >= lists.length) break
      started++ // a block with no chunk at all cannot happen (every block has at least one delta)
      continue
    }
    const k = candidates[(choices[step++ % Math.max(1, choices.length)] ?? 0) % candidates.length] as number
    const list = lists[k] as ReadonlyArray<StreamChunk.StreamChunk>
    out.push(list[positions[k] as number] as StreamChunk.StreamChunk)
    positions[k] = (positions[k] as number) + 1
    if (k === started) started++
  }
  return out
}

const anyChunkArb: fc.Arb<StreamChunk.StreamChunk> = fc.oneof(
  fc.map(
    fc.record({ i: fc.nat(4), kind: fc.constantFrom("text" as const, "reasoning" as const, "tool-call" as const) }),
    ({ i, kind }) => S.blockStart(i, kind)
  ),
  fc.map(fc.record({ i: fc.nat(4), t: fc.string({ maxLength: 4 }) }), ({ i, t }) => S.textDelta(i, t)),
  fc.map(fc.record({ i: fc.nat(4), t: fc.string({ maxLength: 4 }) }), ({ i, t }) => S.reasoningDelta(i, t)),
  fc.map(
    fc.record({ i: fc.nat(4), id: fc.constantFrom("", "a", "b"), n: fc.option(fc.constantFrom("", "x")), t: fc.string({ maxLength: 4 }) }),
    ({ i, id, n, t }) => S.toolCallDelta(i, id, t, n ?? undefined)
  ),
  fc.map(fc.record({ i: fc.nat(4), b: blockArb }), ({ i, b }) => S.blockEnd(i, b)),
  fc.map(fc.record({ a: fc.nat(99), b: fc.nat(99) }), ({ a, b }) => S.usage({ inputTokens: a, outputTokens: b })),
  fc.constantFrom(S.finish({ kind: "stop" }), S.finish({ kind: "tool-calls" }, { s: 1 }))
)

describe("BlockAssembler properties", () => {
  it.effect.prop(
    "[A-1..A-7] any block list, cut into chunks at random points and interleaved by index, reassembles to the same blocks",
    {
      specs: fc.array(
        fc.record({ block: blockArb, cuts: fc.array(fc.nat(64), { maxLength: 6 }), start: fc.boolean(), end: fc.boolean() }),
        { maxLength: 6 }
      ),
      choices: fc.array(fc.nat(), { maxLength: 50 }),
      wireIndexes: fc.shuffled([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]),
      batch: fc.integer({ min: 1, max: 40 })
    },
    ({ batch, choices, specs, wireIndexes }) =>
      Effect.gen(function*() {
        const lists = specs.map((s, i) => blockChunks(s.block, wireIndexes[i] as number, s.cuts, s.start, s.end))
        const chunks = interleave(lists, choices)
        const expected = specs.map((s) => s.block)
        expect(blocksOf(chunks)).toEqual(expected)
        // the Sink over a batched stream agrees with the plain fold
        const viaSink = yield* assemble(chunks, batch)
        expect(viaSink.blocks).toEqual(expected)
        expect(viaSink.chunks).toBe(BlockAssembler.foldAll(chunks).chunks)
      }),
    { arbitrary: { runs: 100 } }
  )

  it.effect.prop(
    "AC-16 [A-10,A-11] random chunk streams: reading is idempotent, blocks ≤ distinct indexes, Sink = fold = last scan state",
    { chunks: fc.array(anyChunkArb, { maxLength: 40 }) },
    ({ chunks }) =>
      Effect.gen(function*() {
        const state = BlockAssembler.foldAll(chunks)
        const once = BlockAssembler.assemble(state)
        expect(BlockAssembler.assemble(state)).toEqual(once)
        const distinct = new Set(chunks.flatMap((c) => (c.type === "usage" || c.type === "finish" ? [] : [c.index])))
        const read = Result.getOrThrow(once)
        expect(read.blocks.length).toBeLessThanOrEqual(distinct.size)
        const last = [...chunks].reverse().find((c) => c.type === "finish")
        expect(read.finish).toEqual(last?.type === "finish" ? last.reason : { kind: "stop" })
        const scanned = yield* Stream.runLast(BlockAssembler.scan(Stream.fromIterable(chunks)))
        expect(scanned._tag === "Some" ? BlockAssembler.assemble(scanned.value) : undefined).toEqual(once)
        expect(yield* Effect.result(assemble(chunks, 7))).toEqual(once)
      }),
    { arbitrary: { runs: 100 } }
  )
})
