/**
 * `harness sessions list`: one row per stored session, most recently active first ({@link ordered}:
 * the later of the last event and the creation, so a fork made now lists first although its copied
 * events are older), under a
 * header: the shortest unique prefix of a `harness-session-<uuid>` id's uuid (at least 8
 * characters; any unique prefix is accepted wherever an id is; other ids are shown whole), the last update in local time, turns, status, model, title (else the first
 * prompt) and directory. Control characters are escaped. `--json` prints one JSON line per
 * session instead ({@link json}).
 *
 * Status (from the last turn): `ok`, `cancelled`, `failed`, `interrupted` (the process stopped
 * mid-turn), `rejected`, `max-steps`, `unfinished` (a turn is still open: running now, or the
 * process died), `empty` (no turn yet), `damaged` (the log cannot be read).
 *
 * @since 0.1.0
 */
import type { Loaded, SessionSummary } from "../../Session/SessionPersistence.js"
import type { SessionEvent, TurnEndReason } from "../../Session/SessionEvent.js"
import * as TerminalText from "../../Tools/TerminalText.js"
import * as SessionIds from "./SessionIds.js"
import * as Title from "./Title.js"

/**
 * A session's status.
 *
 * @since 0.1.0
 * @category models
 */
export type Status = "ok" | "cancelled" | "failed" | "interrupted" | "rejected" | "max-steps" | "unfinished" | "empty" | "damaged"

/**
 * What the list shows of one session.
 *
 * @since 0.1.0
 * @category models
 */
export interface Row {
  readonly summary: SessionSummary
  readonly title: string | undefined
  readonly provider: string | undefined
  readonly model: string | undefined
  readonly status: Status
}

const statusOf = (reason: TurnEndReason): Status => {
  switch (reason.kind) {
    case "completed":
    case "max-tokens":
      return "ok"
    case "aborted":
    case "disposed":
      return "cancelled"
    case "error":
      return "failed"
    case "interrupted":
      return "interrupted"
    case "rejected":
      return "rejected"
    case "max-steps":
      return "max-steps"
    default:
      return "ok"
  }
}

const modelOf = (events: ReadonlyArray<SessionEvent>): { provider?: string; model?: string } => {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!
    if (e.type === "assistant/message") return { provider: e.data.provenance.provider, model: e.data.provenance.model }
    if (e.type === "request/header") return { provider: e.data.header.config.provider, model: e.data.header.config.model }
  }
  return {}
}

/**
 * The row of a session from its summary and its snapshot (`undefined`: the log could not be read).
 *
 * @since 0.1.0
 * @category constructors
 */
export const row = (summary: SessionSummary, loaded: Loaded | undefined): Row => {
  if (loaded === undefined) return { summary, title: undefined, provider: undefined, model: undefined, status: "damaged" }
  const { model, provider } = modelOf(loaded.events)
  let status: Status = "empty"
  if (loaded.repaired.length > 0) {
    status = "unfinished"
  } else {
    for (let i = loaded.events.length - 1; i >= 0; i--) {
      const e = loaded.events[i]!
      if (e.type === "turn/end") {
        status = statusOf(e.data.reason)
        break
      }
    }
  }
  return { summary, title: Title.of(loaded.events), provider, model, status }
}

/**
 * When a session was last active: its last event, or its creation when that is later (a fork's
 * copied events keep their original times).
 *
 * @since 0.1.0
 * @category utils
 */
export const activeAt = (summary: SessionSummary): number => Math.max(summary.updatedAt, summary.header.createdAt)

/**
 * Rows most recently active first ({@link activeAt}), then by id.
 *
 * @since 0.1.0
 * @category utils
 */
export const ordered = (rows: ReadonlyArray<Row>): ReadonlyArray<Row> =>
  [...rows].sort((a, b) => {
    const ia = a.summary.header.id
    const ib = b.summary.header.id
    return activeAt(b.summary) - activeAt(a.summary) || (ia < ib ? -1 : ia > ib ? 1 : 0)
  })

/**
 * `YYYY-MM-DD HH:MM` in the local time zone.
 *
 * @since 0.1.0
 * @category utils
 */
export const localTime = (millis: number): string => {
  const d = new Date(millis)
  const two = (n: number) => String(n).padStart(2, "0")
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}`
}

/**
 * The shortest prefix of each `harness-session-<uuid>` id's uuid that no other id shares (at least
 * `min` characters); any other id whole.
 *
 * @since 0.1.0
 * @category utils
 */
export const uniquePrefixes = (ids: ReadonlyArray<string>, min = 8): ReadonlyMap<string, string> => {
  const shorts = ids.map(SessionIds.short)
  const out = new Map<string, string>()
  ids.forEach((id, i) => {
    const s = shorts[i]!
    if (s === id) return void out.set(id, id)
    let n = Math.min(min, s.length)
    while (n < s.length && shorts.some((o, j) => j !== i && o.startsWith(s.slice(0, n)))) n++
    out.set(id, s.slice(0, n))
  })
  return out
}

const cut = (text: string, max: number): string => text.length <= max ? text : `${text.slice(0, max - 1)}…`

/**
 * The table: a header line, then one line per row.
 *
 * @since 0.1.0
 * @category rendering
 */
export const table = (rows: ReadonlyArray<Row>): string => {
  const prefixes = uniquePrefixes(rows.map((r) => r.summary.header.id))
  const cells = [
    ["ID", "UPDATED (local)", "TURNS", "STATUS", "MODEL", "TITLE / FIRST PROMPT", "DIRECTORY"],
    ...rows.map((r) => [
      prefixes.get(r.summary.header.id) ?? r.summary.header.id,
      localTime(activeAt(r.summary)),
      String(r.summary.turns),
      r.status,
      TerminalText.line(r.model ?? "-"),
      TerminalText.line(cut(r.title ?? (r.summary.firstPrompt === undefined ? "-" : `"${r.summary.firstPrompt}"`), 48)),
      TerminalText.line(r.summary.header.cwd ?? "-")
    ])
  ]
  const widths = cells[0]!.map((_, i) => Math.max(...cells.map((c) => c[i]!.length)))
  return cells.map((c) => c.map((cell, i) => cell.padEnd(widths[i]!)).join("  ").trimEnd()).join("\n")
}

/**
 * One session as `list --json` prints it (one JSON line each).
 *
 * @since 0.1.0
 * @category rendering
 */
export const json = (r: Row) => ({
  id: r.summary.header.id,
  title: r.title ?? null,
  first_prompt: r.summary.firstPrompt ?? null,
  created_at: new Date(r.summary.header.createdAt).toISOString(),
  updated_at: new Date(r.summary.updatedAt).toISOString(),
  turns: r.summary.turns,
  status: r.status,
  provider: r.provider ?? null,
  model: r.model ?? null,
  cwd: r.summary.header.cwd ?? null,
  parent: r.summary.header.parentSession ?? null
})
