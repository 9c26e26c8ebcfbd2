/**
 * Rendering of workspace-context messages (W-3, W-4, W-5): the `<system-reminder>` frame the
 * producer owns (W-8), section texts, escaping, and the byte budget.
 *
 * Budget (W-4): the UTF-8 size of the WHOLE text (frame, intro, sections, notice) never exceeds
 * `maxBytes`. Sections are given broad → specific; when they do not fit, the broadest are dropped
 * first; when only the most specific one is left and it still does not fit, its content is cut
 * (at a UTF-8 character boundary) and marked. A notice inside the frame lists omitted and
 * truncated paths with their sizes. If not even the frame, intro, header and notice fit, nothing
 * is rendered.
 *
 * Decisions (DEC-10): the notice is the last paragraph of the frame; a truncated content ends with
 * the line `[… truncated]`; sizes in the notice are the original file sizes in bytes; a literal
 * `</system-reminder>` (any letter case) in file content becomes `<\/system-reminder>`.
 *
 * @since 0.1.0
 */

/**
 * Opening tag of the frame.
 *
 * @since 0.1.0
 * @category constants
 */
export const OPEN = "<system-reminder>"

/**
 * Closing tag of the frame.
 *
 * @since 0.1.0
 * @category constants
 */
export const CLOSE = "</system-reminder>"

/**
 * Marker appended to a truncated content.
 *
 * @since 0.1.0
 * @category constants
 */
export const TRUNCATION_MARKER = "\n[… truncated]"

const encoder = new TextEncoder()

/**
 * UTF-8 size of a string.
 *
 * @since 0.1.0
 * @category utils
 */
export const byteLength = (s: string): number => encoder.encode(s).length

/**
 * Escapes a literal closing frame tag in content (W-3).
 *
 * @since 0.1.0
 * @category utils
 */
export const escapeContent = (content: string): string =>
  content.replace(/<\/(system-reminder)\s*>/gi, "<\\/$1>")

/**
 * The longest prefix of `s` whose UTF-8 size is at most `maxBytes`, never splitting a character.
 *
 * @since 0.1.0
 * @category utils
 */
export const truncateUtf8 = (s: string, maxBytes: number): string => {
  if (maxBytes <= 0) return ""
  const bytes = encoder.encode(s)
  if (bytes.length <= maxBytes) return s
  let end = maxBytes
  // back off continuation bytes so the cut is on a character boundary
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--
  return new TextDecoder("utf-8").decode(bytes.subarray(0, end))
}

/**
 * One section of a message: a header (path line plus optional note) and optional content.
 *
 * @since 0.1.0
 * @category models
 */
export interface Section {
  /** the display path the section is about (listed in notices) */
  readonly path: string
  /** the heading paragraph, e.g. `Instructions from: AGENTS.md` */
  readonly header: string
  /** the (unescaped) file content, if the section carries one */
  readonly content?: string
}

/**
 * The outcome of {@link render}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Rendered {
  readonly text: string
  /** indices (into the input) of the sections that are in the text, fully or truncated */
  readonly included: ReadonlyArray<number>
  /** index of the truncated section, if any */
  readonly truncated?: number
  /** indices of the omitted sections */
  readonly omitted: ReadonlyArray<number>
}

const sectionText = (section: Section, content: string | undefined): string =>
  content === undefined ? section.header : `${section.header}\n\n${content}`

const frame = (paragraphs: ReadonlyArray<string>): string =>
  `${OPEN}\n${paragraphs.filter((p) => p !== "").join("\n\n")}\n${CLOSE}`

const notice = (
  maxBytes: number,
  sections: ReadonlyArray<Section>,
  omitted: ReadonlyArray<number>,
  truncated: number | undefined
): string => {
  if (omitted.length === 0 && truncated === undefined) return ""
  const size = (i: number) => {
    const s = sections[i]!
    return `${s.path} (${byteLength(s.content ?? "")} bytes)`
  }
  const parts: Array<string> = []
  if (omitted.length > 0) parts.push(`Omitted: ${omitted.map(size).join(", ")}.`)
  if (truncated !== undefined) parts.push(`Truncated: ${size(truncated)}.`)
  return `[Note: these workspace instructions exceed the ${maxBytes}-byte budget. ${parts.join(" ")}]`
}

/**
 * Renders `intro` and `sections` (broad → specific) in one frame within `maxBytes`; `undefined`
 * when there is nothing to render or nothing fits.
 *
 * @since 0.1.0
 * @category constructors
 */
export const render = (
  intro: string,
  sections: ReadonlyArray<Section>,
  maxBytes: number
): Rendered | undefined => {
  if (sections.length === 0 || !Number.isFinite(maxBytes) || maxBytes <= 0) return undefined
  const escaped = sections.map((s) => (s.content === undefined ? undefined : escapeContent(s.content)))
  const build = (first: number, lastContent: string | undefined, truncated: number | undefined): string => {
    const omitted = Array.from({ length: first }, (_, i) => i)
    const parts = [intro]
    for (let i = first; i < sections.length; i++) {
      const content = i === sections.length - 1 && truncated !== undefined ? lastContent : escaped[i]
      parts.push(sectionText(sections[i]!, content))
    }
    parts.push(notice(maxBytes, sections, omitted, truncated))
    return frame(parts)
  }
  const range = (first: number): ReadonlyArray<number> =>
    Array.from({ length: sections.length - first }, (_, i) => first + i)
  // drop broader sections first
  for (let first = 0; first < sections.length; first++) {
    const text = build(first, undefined, undefined)
    if (byteLength(text) <= maxBytes) {
      return { text, included: range(first), omitted: Array.from({ length: first }, (_, i) => i) }
    }
  }
  // only the most specific is left: truncate its content
  const last = sections.length - 1
  const lastContent = escaped[last]
  if (lastContent === undefined) return undefined
  const skeleton = byteLength(build(last, "", last))
  const room = maxBytes - skeleton - byteLength(TRUNCATION_MARKER)
  if (room < 0) return undefined
  const text = build(last, truncateUtf8(lastContent, room) + TRUNCATION_MARKER, last)
  return { text, included: [last], truncated: last, omitted: Array.from({ length: last }, (_, i) => i) }
}
