/**
 * A session as normalized JSON Lines: the conversation without the log's bookkeeping (no streamed
 * chunks, step markers or request headers), one self-describing object per line, for scripts
 * (`jq`) and datasets. Each line names the log events it comes from (`seqs`).
 *
 * Lines, in log order:
 * - first `{"type":"session", id, created, cwd?, title?, lineage, events}`;
 * - `{"type":"user"|"steering"|"context", seqs, time, turn, source, text}`;
 * - `{"type":"assistant", seqs, time, turn, step, provider, model, text, reasoning?, tool_calls?,
 *   usage?, cost?}` with `tool_calls: [{id, name, arguments, seq?}]` (`arguments` parsed when it is
 *   JSON, else the raw text), each followed by one `{"type":"tool_result", seqs, time, turn,
 *   call_id, is_error, code?, text}` per answered call;
 * - `{"type":"turn_end", seqs, time, turn, reason}`, `{"type":"compaction", …, summary, shadowed}`;
 * - a result whose call is unknown (a repaired log) is a `tool_result` line of its own.
 * Times are ISO 8601; a fork's copied lines carry `"copied": true`.
 *
 * @since 0.1.0
 */
import * as Timeline from "./Timeline.js"

const iso = (ms: number): string => new Date(ms).toISOString()

const parsed = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

const linesOf = (entry: Timeline.Entry): ReadonlyArray<object> => {
  const base = { seqs: entry.seqs, time: iso(entry.time), turn: entry.turn, ...(entry.copied ? { copied: true } : {}) }
  switch (entry.kind) {
    case "user":
    case "steering":
    case "context":
      return [{ type: entry.kind, ...base, source: entry.source, text: entry.text }]
    case "turn-end":
      return [{ type: "turn_end", ...base, reason: entry.reason }]
    case "compaction":
      return [{ type: "compaction", ...base, summary: entry.summary, shadowed: entry.shadowedSeqs }]
    case "orphan-result":
      return [{ type: "tool_result", ...base, call_id: entry.callId, is_error: entry.isError, text: entry.text }]
    case "assistant":
      return [
        {
          type: "assistant",
          ...base,
          step: entry.step,
          provider: entry.provider,
          model: entry.model,
          text: entry.text,
          ...(entry.reasoning === "" ? {} : { reasoning: entry.reasoning }),
          ...(entry.calls.length === 0 ? {} : {
            tool_calls: entry.calls.map((c) => ({
              id: c.callId,
              name: c.name,
              arguments: parsed(c.arguments),
              ...(c.seq === undefined ? {} : { seq: c.seq })
            }))
          }),
          ...(entry.usage === undefined ? {} : { usage: entry.usage }),
          ...(entry.cost === undefined ? {} : { cost: entry.cost })
        },
        ...entry.calls.flatMap((c) =>
          c.result === undefined ? [] : [{
            type: "tool_result",
            seqs: [c.result.seq],
            time: iso(c.result.time),
            turn: entry.turn,
            ...(entry.copied ? { copied: true } : {}),
            call_id: c.callId,
            is_error: c.result.isError,
            ...(c.result.code === undefined ? {} : { code: c.result.code }),
            text: c.result.text
          }]
        )
      ]
  }
}

/**
 * The normalized lines of a session (each a JSON text without the newline).
 *
 * @since 0.1.0
 * @category constructors
 */
export const lines = (input: Timeline.Input): ReadonlyArray<string> => {
  const title = Timeline.titleOf(input.events)
  const head = {
    type: "session",
    id: input.header.id,
    created: iso(input.header.createdAt),
    ...(input.header.cwd === undefined ? {} : { cwd: input.header.cwd }),
    ...(title === undefined ? {} : { title }),
    lineage: Timeline.lineageOf(input),
    events: input.events.length
  }
  return [head, ...Timeline.of(input).flatMap(linesOf)].map((l) => JSON.stringify(l))
}

/**
 * The whole export as one text (lines joined, newline-terminated).
 *
 * @since 0.1.0
 * @category constructors
 */
export const render = (input: Timeline.Input): string => `${lines(input).join("\n")}\n`
