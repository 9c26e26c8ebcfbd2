/**
 * Where a compaction cuts (K-6) and what the cheap pass prunes (K-5). Pure functions over the
 * surface nodes; both walk backwards from the end and stop as soon as the kept tail is full, so
 * planning costs O(kept tail), not O(surface).
 *
 * The prune decision of each (immutable) result is memoised, so planning again after new events
 * costs a pointer walk plus the decisions for the new results.
 *
 * A cut at position `p` shadows nodes `[0, p)` and keeps `[p, n)`. It is valid when no tool call
 * announced by an assistant message before `p` has its result at or after `p` (the cut never
 * separates a call from its result; cuts fall between nodes, never inside an assistant message).
 * The kept tail is the shortest valid suffix holding at least `retainTokens`.
 *
 * Decision (DEC-10, docs/decisions/0007): the shadowed range always starts at the start of the
 * surface, so a previous summary (which sits first) is inside the range and is merged into the
 * new one, never nested; at most one summary is on the surface at any time.
 *
 * @since 0.1.0
 */
import type { SessionEvent } from "../../Session/SessionEvent.js"
import * as Estimate from "./Estimate.js"

/**
 * A planned cut.
 *
 * @since 0.1.0
 * @category models
 */
export interface Cut {
  /** first kept position (nodes before it are shadowed); 0 = nothing to shadow */
  readonly cut: number
  /** estimated tokens of the kept tail */
  readonly keptTokens: number
}

/**
 * Finds the cut: the largest valid position whose kept suffix holds at least `retainTokens`
 * (estimated with `estimate`). `{cut: 0}` when the whole surface fits in the tail.
 *
 * @since 0.1.0
 * @category planning
 */
export const planCut = (
  nodes: ReadonlyArray<SessionEvent>,
  retainTokens: number,
  estimate: (event: SessionEvent) => number = Estimate.event
): Cut => {
  // results seen in the suffix whose announcing assistant message is not in the suffix yet
  const pending = new Set<string>()
  let kept = 0
  for (let p = nodes.length - 1; p > 0; p--) {
    const node = nodes[p] as SessionEvent
    kept += estimate(node)
    if (node.type === "tool/result") pending.add(node.data.callId)
    else if (node.type === "assistant/message") {
      for (const block of node.data.content) if (block.type === "tool-call") pending.delete(block.id)
    }
    if (kept >= retainTokens && pending.size === 0) return { cut: p, keptTokens: kept }
  }
  return { cut: 0, keptTokens: kept + (nodes.length > 0 ? estimate(nodes[0] as SessionEvent) : 0) }
}

/**
 * `true` when a cut at `p` separates no tool call from its result (for tests and assertions).
 *
 * @since 0.1.0
 * @category planning
 */
export const isValidCut = (nodes: ReadonlyArray<SessionEvent>, p: number): boolean => {
  const announced = new Set<string>()
  for (let i = 0; i < p; i++) {
    const node = nodes[i] as SessionEvent
    if (node.type === "assistant/message") {
      for (const block of node.data.content) if (block.type === "tool-call") announced.add(block.id)
    }
  }
  for (let i = p; i < nodes.length; i++) {
    const node = nodes[i] as SessionEvent
    if (node.type === "tool/result" && announced.has(node.data.callId)) return false
  }
  return true
}

/**
 * Code points above which an old tool result is trimmed (K-5).
 *
 * @since 0.1.0
 * @category constants
 */
export const PRUNE_ABOVE = 8_192

/**
 * Code points kept at the head of a trimmed result.
 *
 * @since 0.1.0
 * @category constants
 */
export const PRUNE_HEAD = 4_096

/**
 * Code points kept at the tail of a trimmed result.
 *
 * @since 0.1.0
 * @category constants
 */
export const PRUNE_TAIL = 1_024

const codePoints = (s: string): number => {
  let n = 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1)
      if (d >= 0xdc00 && d <= 0xdfff) i++
    }
    n++
  }
  return n
}

const textOf = (node: SessionEvent): string | undefined => {
  if (node.type !== "tool/result") return undefined
  let out = ""
  for (const block of node.data.content) {
    if (block.type !== "text") return undefined
    out += block.text
  }
  return out
}

/**
 * The marker line of a trimmed result (names the original event and what was left out).
 *
 * @since 0.1.0
 * @category constants
 */
export const pruneMarker = (originalSeq: number, omitted: number): string =>
  `[… ${omitted} characters of tool result #${originalSeq} left out to save context; recall {"from": ${originalSeq}, "to": ${originalSeq}} brings them back …]`

/**
 * The trimmed text of a long result: first {@link PRUNE_HEAD} and last {@link PRUNE_TAIL} code
 * points around one marker line.
 *
 * @since 0.1.0
 * @category planning
 */
export const trim = (text: string, originalSeq: number): { readonly text: string; readonly omitted: number } => {
  // walk only the head and the tail (code points, surrogate-safe); the middle is never copied
  let head = 0
  for (let n = 0; n < PRUNE_HEAD && head < text.length; n++) head += isPairAt(text, head) ? 2 : 1
  let tail = text.length
  for (let n = 0; n < PRUNE_TAIL && tail > head; n++) tail -= tail >= 2 && isPairAt(text, tail - 2) ? 2 : 1
  const omitted = codePoints(text) - PRUNE_HEAD - PRUNE_TAIL
  return { text: `${text.slice(0, head)}\n${pruneMarker(originalSeq, omitted)}\n${text.slice(tail)}`, omitted }
}

const isPairAt = (s: string, i: number): boolean => {
  const c = s.charCodeAt(i)
  if (c < 0xd800 || c > 0xdbff || i + 1 >= s.length) return false
  const d = s.charCodeAt(i + 1)
  return d >= 0xdc00 && d <= 0xdfff
}

/**
 * One planned prune: the result node to replace and its trimmed text.
 *
 * @since 0.1.0
 * @category models
 */
export interface Prune {
  readonly node: SessionEvent & { readonly type: "tool/result" }
  /** the original (un-pruned) event seq */
  readonly originalSeq: number
  readonly text: string
  readonly omitted: number
  /** estimated tokens saved (code units left out / 3.5; the exact figure is re-measured after) */
  readonly saved: number
}

/**
 * The prunes of the cheap pass (K-5): every text-only tool result before `cut` longer than
 * {@link PRUNE_ABOVE} code points that is not already a trimmed replacement.
 *
 * @since 0.1.0
 * @category planning
 */
export const planPrunes = (nodes: ReadonlyArray<SessionEvent>, cut: number): ReadonlyArray<Prune> => {
  const out: Array<Prune> = []
  for (let p = 0; p < cut; p++) {
    const node = nodes[p] as SessionEvent
    if (node.type !== "tool/result" || node.surfaceOp !== "append") continue
    let decided = decisions.get(node)
    if (decided === undefined) {
      decided = decide(node)
      decisions.set(node, decided)
    }
    if (decided !== null) out.push(decided)
  }
  return out
}

/** per (immutable) event: its prune, or `null` when it is short enough; decided once */
const decisions = new WeakMap<SessionEvent, Prune | null>()

const decide = (node: SessionEvent & { readonly type: "tool/result" }): Prune | null => {
  const text = textOf(node)
  if (text === undefined || text.length <= PRUNE_ABOVE || codePoints(text) <= PRUNE_ABOVE) return null
  const trimmed = trim(text, node.seq)
  return {
    node,
    originalSeq: node.seq,
    text: trimmed.text,
    omitted: trimmed.omitted,
    saved: Math.ceil((text.length - trimmed.text.length) / Estimate.BYTES_PER_TOKEN)
  }
}
