/**
 * The `checkpoint/manifest` event: after each step that changed the workspace (and after each code
 * rewind), the paths changed, each with its state before and after (see {@link FileState}). The
 * bytes of every stored `before` are in the session's journal (`Journal`), named by hash. A rewind
 * record carries `rewind: {id, turn}`. Unknown to older harness versions, the event loads and
 * round-trips verbatim (both backends keep unknown event types).
 *
 * @since 0.1.0
 */
import type { SessionEvent } from "../Session/SessionEvent.js"
import type { FileState } from "./FileState.js"

declare module "../Session/SessionEvent.js" {
  interface SessionEventMap {
    /** the workspace paths a step (or a rewind) changed, with their states before and after */
    readonly "checkpoint/manifest": ManifestData
  }
}

/**
 * The event type.
 *
 * @since 0.1.0
 * @category constants
 */
export const TYPE = "checkpoint/manifest"

/**
 * One changed path in a manifest.
 *
 * @since 0.1.0
 * @category models
 */
export interface PathChange {
  readonly path: string
  readonly before: FileState
  readonly after: FileState
  /** the tool that changed it (`write`, `edit`, `bash`, `rewind`, …) */
  readonly tool: string
}

/**
 * The payload of a manifest.
 *
 * @since 0.1.0
 * @category models
 */
export interface ManifestData {
  readonly turn: number
  readonly step: number
  readonly changes: ReadonlyArray<PathChange>
  /** why some pre-images were not kept (too large, journal full) */
  readonly notices: ReadonlyArray<string>
  /** present on the record of a code rewind */
  readonly rewind?: { readonly id: string; readonly turn: number }
}

/**
 * A manifest with its event seq.
 *
 * @since 0.1.0
 * @category models
 */
export interface Logged {
  readonly seq: number
  readonly data: ManifestData
}

/**
 * The manifests of a log, in order.
 *
 * @since 0.1.0
 * @category utils
 */
export const of = (events: ReadonlyArray<SessionEvent>): ReadonlyArray<Logged> =>
  events.flatMap((e) => e.type === TYPE ? [{ seq: e.seq, data: e.data }] : [])

const verb = (c: PathChange): string => {
  if (c.before.kind === "absent") return "created"
  if (c.after.kind === "absent") return "deleted"
  if (c.before.kind === "file" && c.after.kind === "file" && c.before.hash === c.after.hash) return "mode"
  return "changed"
}

const depth = (path: string): number => path.split("/").length

/**
 * Lines for `sessions show`: per turn (and per rewind), which paths changed and how, shallow paths
 * first, at most 20 named.
 *
 * @since 0.1.0
 * @category rendering
 */
export const summaryLines = (events: ReadonlyArray<SessionEvent>): ReadonlyArray<string> => {
  const manifests = of(events)
  if (manifests.length === 0) return []
  const lines: Array<string> = ["workspace changes (rewind with: harness sessions rewind <id> --turn N):"]
  const byTurn = new Map<string, Map<string, string>>()
  for (const m of manifests) {
    const label = m.data.rewind === undefined
      ? `turn ${m.data.turn}`
      : `rewind to turn ${m.data.rewind.turn} (event #${m.seq})`
    const paths = byTurn.get(label) ?? new Map<string, string>()
    for (const c of m.data.changes) paths.set(c.path, `${verb(c)} by ${c.tool}`)
    byTurn.set(label, paths)
    for (const n of m.data.notices) lines.push(`  ${label}: note: ${n}`)
  }
  for (const [label, paths] of byTurn) {
    // shallow paths first: a generated directory does not hide the other files
    const ordered = [...paths].sort(([a], [b]) => depth(a) - depth(b) || (a < b ? -1 : a > b ? 1 : 0))
    const shown = ordered.slice(0, 20).map(([p, how]) => `${p} (${how})`)
    const more = paths.size > 20 ? `, and ${paths.size - 20} more` : ""
    lines.push(`  ${label}: ${paths.size} path${paths.size === 1 ? "" : "s"}: ${shown.join(", ")}${more}`)
  }
  return lines
}
