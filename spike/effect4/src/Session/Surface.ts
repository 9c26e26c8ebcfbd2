/**
 * The surface (S-2, S-5..S-8, S-13): the ordered subset of log events that become model messages.
 *
 * A surface event enters by `surfaceOp: "append"` (pushed at the end) or by
 * `{op: "replace", start, end}`: `start` and `end` are the seqs of current surface nodes, `start`
 * not positioned after `end`; every node between them (inclusive, by position) is shadowed and the
 * new event takes their place. Shadowed events stay in the log.
 *
 * Decisions where the spec is silent (DEC-10):
 * - A replace must carry `sourceEventSeqs` including every shadowed seq; an absent list is a
 *   violation (it cannot include them).
 * - `foldSurface` over a log that contains an event failing the surface rules skips that event
 *   (logs are validated on append, seed and load, so this only matters for hand-built inputs).
 * - The incremental {@link State} is a mutable structure owned by one writer (a live session under
 *   its append lock, or a local fold); nothing else ever sees it mutate.
 *
 * @since 0.1.0
 */
import type { SessionEvent, SurfaceOp } from "./SessionEvent.js"
import { surfaceTypes } from "./SessionEvent.js"

/**
 * One replace applied to the surface.
 *
 * @since 0.1.0
 * @category models
 */
export interface Replacement {
  /** seq of the replacing event */
  readonly seq: number
  readonly start: number
  readonly end: number
  /** seqs of the nodes it shadowed, in surface order */
  readonly shadowedSeqs: ReadonlyArray<number>
}

/**
 * The result of folding a log into its surface.
 *
 * @since 0.1.0
 * @category models
 */
export interface Folded {
  readonly nodes: ReadonlyArray<SessionEvent>
  readonly replacements: ReadonlyArray<Replacement>
}

/**
 * The incremental, single-writer surface state.
 *
 * @since 0.1.0
 * @category internal
 */
export interface State {
  readonly nodes: Array<SessionEvent>
  /** seq → position in `nodes` */
  readonly positions: Map<number, number>
  readonly replacements: Array<Replacement>
  replaceGeneration: number
}

/**
 * A fresh, empty surface state.
 *
 * @since 0.1.0
 * @category internal
 */
export const makeState = (): State => ({ nodes: [], positions: new Map(), replacements: [], replaceGeneration: 0 })

const isSafeNat = (u: unknown): u is number => typeof u === "number" && Number.isSafeInteger(u) && u >= 0

/**
 * Checks the surface metadata of an event about to get `seq` against the current surface
 * (S-5..S-8). Returns a message naming the rule that failed, or `undefined` when valid.
 *
 * @since 0.1.0
 * @category internal
 */
export const check = (
  state: State,
  type: string,
  surfaceOp: unknown,
  sourceEventSeqs: unknown,
  seq: number
): string | undefined => {
  const isSurface = surfaceTypes.has(type)
  if (!isSurface) {
    if (surfaceOp !== undefined) return `S-5: ${type} is not a surface type and must not carry surfaceOp`
    if (sourceEventSeqs !== undefined) return `S-5: ${type} is not a surface type and must not carry sourceEventSeqs`
    return undefined
  }
  if (surfaceOp === undefined) return `S-5: ${type} is a surface type and requires a surfaceOp`
  if (sourceEventSeqs !== undefined) {
    if (!Array.isArray(sourceEventSeqs)) return "S-7: sourceEventSeqs must be an array"
    if (sourceEventSeqs.length === 0 && type !== "assistant/message") {
      return "S-7: an empty sourceEventSeqs is allowed only on assistant/message"
    }
    const seen = new Set<number>()
    for (const s of sourceEventSeqs as ReadonlyArray<unknown>) {
      if (!isSafeNat(s)) return `S-7: sourceEventSeqs entries must be non-negative safe integers (got ${String(s)})`
      if (s >= seq) return `S-7: source seq ${s} is not below the event's own seq ${seq}`
      if (seen.has(s)) return `S-7: duplicate source seq ${s}`
      seen.add(s)
    }
  }
  if (surfaceOp === "append") return undefined
  if (typeof surfaceOp !== "object" || surfaceOp === null || Array.isArray(surfaceOp)) {
    return `S-6: surfaceOp must be "append" or {op: "replace", start, end}`
  }
  const op = surfaceOp as Record<string, unknown>
  const keys = Object.keys(op)
  if (keys.length !== 3 || op["op"] !== "replace" || !("start" in op) || !("end" in op)) {
    return `S-6: surfaceOp must be "append" or exactly {op: "replace", start, end}`
  }
  const start = op["start"]
  const end = op["end"]
  if (!isSafeNat(start) || !isSafeNat(end)) return "S-6: replace start and end must be non-negative safe integers"
  const ps = state.positions.get(start)
  const pe = state.positions.get(end)
  if (ps === undefined) return `S-8: replace start ${start} is not a current surface node`
  if (pe === undefined) return `S-8: replace end ${end} is not a current surface node`
  if (ps > pe) return `S-8: replace start ${start} is positioned after end ${end}`
  if (sourceEventSeqs === undefined) return "S-8: a replace requires sourceEventSeqs including every shadowed node"
  const sources = new Set(sourceEventSeqs as ReadonlyArray<number>)
  for (let p = ps; p <= pe; p++) {
    const shadowed = (state.nodes[p] as SessionEvent).seq
    if (!sources.has(shadowed)) return `S-8: sources must include shadowed node ${shadowed}`
  }
  return undefined
}

/**
 * Applies an event that passed {@link check}. Non-surface events are ignored.
 *
 * @since 0.1.0
 * @category internal
 */
export const apply = (state: State, event: SessionEvent): void => {
  const op: SurfaceOp | undefined = event.surfaceOp
  if (op === undefined || !surfaceTypes.has(event.type)) return
  if (op === "append") {
    state.positions.set(event.seq, state.nodes.length)
    state.nodes.push(event)
    return
  }
  const ps = state.positions.get(op.start) as number
  const pe = state.positions.get(op.end) as number
  const shadowed = state.nodes.splice(ps, pe - ps + 1, event)
  for (const s of shadowed) state.positions.delete(s.seq)
  for (let p = ps; p < state.nodes.length; p++) state.positions.set((state.nodes[p] as SessionEvent).seq, p)
  state.replacements.push(Object.freeze({
    seq: event.seq,
    start: op.start,
    end: op.end,
    shadowedSeqs: Object.freeze(shadowed.map((s) => s.seq))
  }))
  state.replaceGeneration++
}

/**
 * Folds a log into its surface (S-13). Pure: the result shares the (immutable) events.
 *
 * @since 0.1.0
 * @category folds
 */
export const foldSurface = (events: ReadonlyArray<SessionEvent>): Folded => {
  const state = makeState()
  for (const event of events) {
    if (check(state, event.type, event.surfaceOp, event.sourceEventSeqs, event.seq) === undefined) apply(state, event)
  }
  return { nodes: Object.freeze(state.nodes.slice()), replacements: Object.freeze(state.replacements.slice()) }
}
