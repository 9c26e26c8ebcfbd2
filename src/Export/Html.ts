/**
 * A session as one self-contained HTML page: inline CSS and a few lines of inline script, no
 * external resource of any kind (a Content-Security-Policy of `default-src 'none'` makes sure a
 * browser fetches nothing), readable offline and shareable as one file.
 *
 * The page shows the session's id, title, directory, models and fork lineage; every turn with its
 * user and steering messages, the assistant's answers (reasoning collapsed in `<details>`), each tool
 * call with its arguments and result (an `edit` or `write` as a coloured diff), how the turn ended,
 * compactions, the usage of every request and the session's totals and cost. Each block carries the
 * log seqs it comes from (`#12–15`). Buttons expand or collapse every section.
 *
 * Every string from the log (model text, tool arguments and results, titles, paths) is escaped
 * (`&`, `<`, `>`, `"`, `'`), so hostile content stays text: it cannot add markup, scripts or fetches.
 *
 * @since 0.1.0
 */
import * as Timeline from "./Timeline.js"

/**
 * Escapes text for HTML content and attribute values.
 *
 * @since 0.1.0
 * @category utils
 */
export const escape = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : c === '"' ? "&quot;" : "&#39;")

const CSS = `
:root{--fg:#1d1f21;--muted:#6a6f75;--bg:#fff;--card:#f6f7f9;--line:#dde1e6;--user:#0b62d6;--ok:#1a7f37;--bad:#c62828;--add:#e6ffec;--del:#ffebe9}
@media (prefers-color-scheme:dark){:root{--fg:#e6e6e6;--muted:#9aa0a6;--bg:#16181b;--card:#202329;--line:#30343a;--user:#6ea8ff;--ok:#4cc06a;--bad:#ff6b6b;--add:#12351d;--del:#3d1a1a}}
*{box-sizing:border-box}body{margin:0 auto;max-width:980px;padding:24px;font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg)}
h1{font-size:20px;margin:0 0 4px}.meta{color:var(--muted);font-size:13px}.meta code{font-size:12px}
.controls{margin:12px 0}.controls button{font:inherit;font-size:13px;margin-right:8px;padding:2px 10px;border:1px solid var(--line);border-radius:6px;background:var(--card);color:var(--fg);cursor:pointer}
.turn{border-top:1px solid var(--line);margin-top:18px;padding-top:8px}.turn>h2{font-size:14px;color:var(--muted);margin:0 0 8px;font-weight:600}
.msg{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:10px 12px;margin:8px 0}
.msg.user{border-left:4px solid var(--user)}.msg.steering{border-left:4px dashed var(--user)}.msg.context{opacity:.8}
.who{font-size:12px;color:var(--muted);margin-bottom:4px;display:flex;justify-content:space-between;gap:8px}
.text{white-space:pre-wrap;word-wrap:break-word}pre{white-space:pre-wrap;word-wrap:break-word;margin:6px 0;padding:8px;background:var(--bg);border:1px solid var(--line);border-radius:6px;font:12.5px/1.45 ui-monospace,SFMono-Regular,Menlo,monospace;max-height:480px;overflow:auto}
details{margin:6px 0}summary{cursor:pointer;color:var(--muted);font-size:13px}
.tool{border:1px solid var(--line);border-radius:6px;padding:6px 10px;margin:6px 0}.tool.error{border-color:var(--bad)}
.tool .name{font-family:ui-monospace,monospace;font-weight:600}.ok{color:var(--ok)}.bad{color:var(--bad)}
.diff .add{background:var(--add);display:block}.diff .del{background:var(--del);display:block}
.end{font-size:13px;margin:6px 0}.usage{font-size:12px;color:var(--muted)}table.totals{border-collapse:collapse;font-size:13px;margin-top:8px}table.totals td{padding:2px 12px 2px 0}
`

const SCRIPT = `
document.getElementById("expand").addEventListener("click",function(){document.querySelectorAll("details").forEach(function(d){d.open=true})});
document.getElementById("collapse").addEventListener("click",function(){document.querySelectorAll("details").forEach(function(d){d.open=false})});
`

const seqLabel = (seqs: ReadonlyArray<number>): string =>
  seqs.length === 0 ? "" : seqs.length === 1 ? `#${seqs[0]}` : `#${Math.min(...seqs)}–${Math.max(...seqs)}`

const field = (args: unknown, key: string): string | undefined => {
  if (typeof args !== "object" || args === null || !(key in args)) return undefined
  const v: unknown = (args as { readonly [k: string]: unknown })[key]
  return typeof v === "string" ? v : undefined
}

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

const diffLines = (lines: ReadonlyArray<string>, cls: "add" | "del"): string =>
  lines.map((l) => `<span class="${cls}">${cls === "add" ? "+" : "-"} ${escape(l)}</span>`).join("")

/** an `edit` or `write` call as a diff; other calls as pretty JSON arguments */
const argumentsHtml = (name: string, raw: string): string => {
  const args = parse(raw)
  const path = field(args, "file_path") ?? field(args, "path")
  const oldText = field(args, "old_string")
  const newText = field(args, "new_string")
  if (name === "edit" && oldText !== undefined && newText !== undefined) {
    return `<div class="path">${escape(path ?? "?")}</div><pre class="diff">${diffLines(oldText.split("\n"), "del")}${
      diffLines(newText.split("\n"), "add")
    }</pre>`
  }
  const content = field(args, "content")
  if (name === "write" && content !== undefined) {
    return `<div class="path">${escape(path ?? "?")} (new content)</div><pre class="diff">${diffLines(content.split("\n"), "add")}</pre>`
  }
  if (name === "bash") {
    const command = field(args, "command")
    if (command !== undefined) return `<pre>$ ${escape(command)}</pre>`
  }
  return `<pre>${escape(args === undefined ? raw : JSON.stringify(args, null, 2))}</pre>`
}

const callHtml = (call: Timeline.Call): string => {
  const result = call.result
  const status = result === undefined
    ? `<span class="bad">no result logged</span>`
    : result.isError
    ? `<span class="bad">✗ error${result.code === undefined ? "" : ` ${escape(result.code)}`}</span>`
    : `<span class="ok">✓</span>`
  const lines = result === undefined ? 0 : result.text.split("\n").length
  return `<div class="tool${result?.isError === true ? " error" : ""}"><div class="who"><span><span class="name">${escape(call.name)}</span> ${status}</span><span>${
    escape(seqLabel([call.seq, result?.seq].filter((s): s is number => s !== undefined)))
  }</span></div>${argumentsHtml(call.name, call.arguments)}${
    result === undefined ? "" : `<details${lines <= 12 ? " open" : ""}><summary>result (${lines} line${lines === 1 ? "" : "s"})</summary><pre>${escape(result.text)}</pre></details>`
  }</div>`
}

const usageLine = (entry: Extract<Timeline.Entry, { kind: "assistant" }>): string => {
  const u = entry.usage
  if (u === undefined) return ""
  const parts = [
    `${u.inputTokens} in`,
    `${u.outputTokens} out`,
    ...(u.cacheReadTokens === undefined ? [] : [`${u.cacheReadTokens} cache read`]),
    ...(u.cacheWriteTokens === undefined ? [] : [`${u.cacheWriteTokens} cache write`]),
    ...(entry.cost === undefined ? [] : [`$${entry.cost.toFixed(6)}`])
  ]
  return `<div class="usage">${escape(parts.join(" · "))}</div>`
}

const endHtml = (entry: Extract<Timeline.Entry, { kind: "turn-end" }>): string => {
  const r = entry.reason
  const detail = r.kind === "error"
    ? `failed${r.code === undefined ? "" : ` (${r.code})`}: ${r.message}`
    : r.kind === "aborted"
    ? `cancelled${r.reason === undefined ? "" : `: ${r.reason}`}`
    : r.kind === "rejected"
    ? `rejected: ${r.reason}`
    : r.kind
  return `<div class="end ${r.kind === "completed" ? "ok" : "bad"}">turn ${entry.turn} ${escape(detail)} <span class="usage">${seqLabel(entry.seqs)}</span></div>`
}

const entryHtml = (entry: Timeline.Entry): string => {
  const copied = entry.copied ? " (from the parent session)" : ""
  switch (entry.kind) {
    case "user":
    case "steering":
      return `<div class="msg ${entry.kind}"><div class="who"><span>${entry.kind === "user" ? "user" : "user (steering)"}${copied}</span><span>${
        seqLabel(entry.seqs)
      }</span></div><div class="text">${escape(entry.text)}</div></div>`
    case "context":
      return `<details class="msg context"><summary>context (${escape(entry.source)})${copied} ${seqLabel(entry.seqs)}</summary><pre>${escape(entry.text)}</pre></details>`
    case "assistant":
      return `<div class="msg assistant"><div class="who"><span>assistant · ${escape(entry.provider)}/${escape(entry.model)} · step ${entry.step}${copied}</span><span>${
        seqLabel(entry.seqs)
      }</span></div>${
        entry.reasoning === "" ? "" : `<details class="thinking"><summary>thinking</summary><div class="text">${escape(entry.reasoning)}</div></details>`
      }${entry.text === "" ? "" : `<div class="text">${escape(entry.text)}</div>`}${entry.calls.map(callHtml).join("")}${usageLine(entry)}</div>`
    case "orphan-result":
      return `<div class="tool${entry.isError ? " error" : ""}"><div class="who"><span>result of ${escape(entry.callId)}</span><span>${seqLabel(entry.seqs)}</span></div><pre>${
        escape(entry.text)
      }</pre></div>`
    case "turn-end":
      return endHtml(entry)
    case "compaction":
      return `<details class="msg context"><summary>compaction: events #${entry.shadowedSeqs[0]}–${entry.shadowedSeqs[1]} summarized ${seqLabel(entry.seqs)}</summary><div class="text">${
        escape(entry.summary)
      }</div></details>`
  }
}

const totalsHtml = (entries: ReadonlyArray<Timeline.Entry>): string => {
  const t = Timeline.totals(entries)
  const rows: ReadonlyArray<readonly [string, string]> = [
    ["requests", String(t.messages)],
    ["input tokens", String(t.input)],
    ["output tokens", String(t.output)],
    ["cache read tokens", String(t.cacheRead)],
    ["cache write tokens", String(t.cacheWrite)],
    ["cost", t.cost === undefined ? "unknown (a model without prices)" : `$${t.cost.toFixed(6)}`]
  ]
  return `<h2>Usage</h2><table class="totals">${rows.map(([k, v]) => `<tr><td>${k}</td><td>${escape(v)}</td></tr>`).join("")}</table>`
}

/**
 * The page of a session.
 *
 * @since 0.1.0
 * @category constructors
 */
export const render = (input: Timeline.Input): string => {
  const entries = Timeline.of(input)
  const title = Timeline.titleOf(input.events)
  const models = [...new Set(entries.flatMap((e) => e.kind === "assistant" ? [`${e.provider}/${e.model}`] : []))]
  const lineage = Timeline.lineageOf(input)
  const turns = new Map<number, Array<string>>()
  for (const e of entries) {
    const list = turns.get(e.turn) ?? []
    list.push(entryHtml(e))
    turns.set(e.turn, list)
  }
  const body = [...turns].map(([turn, html]) =>
    `<section class="turn"><h2>${turn === 0 ? "before the first turn" : `turn ${turn}`}</h2>${html.join("")}</section>`
  ).join("")
  const heading = title ?? input.header.id
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="effect-harness${input.version === undefined ? "" : ` ${escape(input.version)}`}">
<title>${escape(heading)}</title><style>${CSS}</style></head>
<body><h1>${escape(heading)}</h1>
<div class="meta">session <code>${escape(input.header.id)}</code> · created ${escape(new Date(input.header.createdAt).toISOString())}${
    input.header.cwd === undefined ? "" : ` · in <code>${escape(input.header.cwd)}</code>`
  }${models.length === 0 ? "" : ` · ${models.map((m) => `<code>${escape(m)}</code>`).join(", ")}`} · ${input.events.length} events</div>
${
    lineage.length > 1
      ? `<div class="meta lineage">fork lineage: ${lineage.map((l) => `<code>${escape(l.id)}</code>`).join(" ← ")}${
        input.header.seedLength === undefined ? "" : ` (the first ${input.header.seedLength} events come from the parent)`
      }</div>`
      : ""
  }
<div class="controls"><button id="expand" type="button">expand all</button><button id="collapse" type="button">collapse all</button></div>
${body}
${totalsHtml(entries)}
<script>${SCRIPT}</script>
</body></html>
`
}
