/**
 * The summary's words (K-7, K-8): the summarisation instruction with its fixed sections, the
 * citation check, and the one line the harness writes above every summary.
 *
 * The model cannot know event seqs from the messages alone, so the instruction lists the seq of
 * every message of the shadowed range, in order (`#12 #13 #17 …`); citations name seq ranges
 * (`[#120-#188]` or `[#120]`). A citation is kept only when the whole range lies inside the
 * shadowed seqs `[first, last]`; every other one is removed from the text and counted.
 *
 * @since 0.1.0
 */

/**
 * The fixed sections a summary must have (K-7).
 *
 * @since 0.1.0
 * @category constants
 */
export const SECTIONS: ReadonlyArray<string> = [
  "Goal and constraints: what the user asked for, in their words where it matters, and every constraint they set",
  "Decisions: what was decided and why",
  "Files: every path read or changed, and what changed in it",
  "Errors: errors met and how they were fixed (or that they are still open)",
  "Work done",
  "Work pending",
  "Current state and next step: exactly where the work stands and the very next action"
]

/**
 * The summarisation instruction (the final user message of the summary request).
 *
 * @since 0.1.0
 * @category constructors
 */
export const instruction = (options: {
  readonly messageSeqs: ReadonlyArray<number>
  readonly first: number
  readonly last: number
  readonly hasPreviousSummary: boolean
  readonly extra: ReadonlyArray<string>
}): string => {
  const lines = [
    "Stop here and do not call any tool. Your context window is filling up: write a summary of the conversation so far that lets you continue the work without it.",
    "",
    "Use exactly these sections, as Markdown headings, with short bullets:",
    ...SECTIONS.map((s, i) => `${i + 1}. ${s}`),
    "",
    `Cite your sources: end every bullet with the range of log events it comes from, written [#<first>-#<last>] (or [#<seq>] for one event). The messages above are log events ${
      options.messageSeqs.map((s) => `#${s}`).join(" ")
    } in that order; cite only seqs between #${options.first} and #${options.last}.`,
    ...(options.hasPreviousSummary
      ? ["The first message above is an earlier summary: merge its content into yours (keep its citations), do not nest it."]
      : []),
    "Keep file paths, identifiers, commands and error messages exact. Do not invent anything.",
    ...(options.extra.length === 0 ? [] : ["", "Additional instructions:", ...options.extra])
  ]
  return lines.join("\n")
}

/**
 * The result of the citation check.
 *
 * @since 0.1.0
 * @category models
 */
export interface Checked {
  readonly text: string
  readonly kept: number
  readonly dropped: number
}

const CITATION = /\[#(\d+)(?:\s*-\s*#?(\d+))?\]/g

/**
 * Keeps the citations inside `[first, last]`, removes the others (K-8).
 *
 * @since 0.1.0
 * @category utils
 */
export const checkCitations = (text: string, first: number, last: number): Checked => {
  let kept = 0
  let dropped = 0
  const out = text.replace(CITATION, (match, a: string, b: string | undefined) => {
    const from = Number(a)
    const to = b === undefined ? from : Number(b)
    if (from <= to && from >= first && to <= last) {
      kept++
      return match
    }
    dropped++
    return ""
  })
  return { text: out, kept, dropped }
}

/**
 * Every citation range of a text (valid or not).
 *
 * @since 0.1.0
 * @category utils
 */
export const citations = (text: string): ReadonlyArray<readonly [number, number]> =>
  Array.from(text.matchAll(CITATION), (m) => {
    const from = Number(m[1])
    return [from, m[2] === undefined ? from : Number(m[2])] as const
  })

/**
 * The line the harness writes above the summary (K-8).
 *
 * @since 0.1.0
 * @category constructors
 */
export const framing = (first: number, last: number): string =>
  `[Summary of the earlier conversation, written when the context was compacted. It replaces log events #${first}-#${last}. The recall tool brings back any cited range verbatim, e.g. recall {"from": ${first}, "to": ${
    Math.min(last, first + 10)
  }}.]`
