/**
 * Lossless text for `edit` and `write` (issue 26): a file is decoded only when its bytes come back
 * unchanged once encoded again, its UTF-8 byte order mark is remembered, and its line endings are
 * known, so a tool changes only the bytes it was asked to change.
 *
 * - {@link decode}: strict UTF-8 (an invalid sequence is refused, never replaced by U+FFFD); a
 *   leading BOM is split off and {@link encode} puts it back.
 * - {@link replacing}: replacement text written with the line endings of the text it replaces.
 *
 * @since 0.1.0
 */

const BOM = [0xef, 0xbb, 0xbf] as const

/**
 * Decoded text and whether the file started with a UTF-8 byte order mark (not part of `text`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Decoded {
  readonly bom: boolean
  readonly text: string
}

/**
 * Whether the bytes start with a UTF-8 byte order mark.
 *
 * @since 0.1.0
 * @category predicates
 */
export const hasBom = (bytes: Uint8Array): boolean =>
  bytes.length >= 3 && bytes[0] === BOM[0] && bytes[1] === BOM[1] && bytes[2] === BOM[2]

/**
 * Decodes UTF-8 losslessly: `undefined` when the bytes are not valid UTF-8 (e.g. Latin-1 `caf\xe9`),
 * so encoding the result again with {@link encode} gives back the same bytes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const decode = (bytes: Uint8Array): Decoded | undefined => {
  const bom = hasBom(bytes)
  try {
    // ignoreBOM: a second U+FEFF after the split-off BOM stays in the text
    const text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bom ? bytes.subarray(3) : bytes)
    return { bom, text }
  } catch {
    // TypeError: the data is not valid UTF-8 (the only failure of a fatal decoder)
    return undefined
  }
}

/**
 * Encodes text as UTF-8, with the byte order mark first when `bom` is set.
 *
 * @since 0.1.0
 * @category utils
 */
export const encode = (decoded: Decoded): Uint8Array => {
  const body = new TextEncoder().encode(decoded.text)
  if (!decoded.bom) return body
  const out = new Uint8Array(body.length + 3)
  out.set(BOM, 0)
  out.set(body, 3)
  return out
}

/**
 * The line endings of a text: `crlf` when every line ending is `\r\n`, `lf` when none is, `mixed`
 * when both occur, `none` without a line ending.
 *
 * @since 0.1.0
 * @category utils
 */
export const endingsOf = (text: string): "crlf" | "lf" | "mixed" | "none" => {
  let crlf = 0
  let lf = 0
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) {
    if (i > 0 && text.charCodeAt(i - 1) === 13) crlf++
    else lf++
  }
  return crlf === 0 ? (lf === 0 ? "none" : "lf") : lf === 0 ? "crlf" : "mixed"
}

const endingFound = (text: string, index: number): "\r\n" | "\n" =>
  index > 0 && text.charCodeAt(index - 1) === 13 ? "\r\n" : "\n"

/**
 * The line endings inside `text[start, end)`, in order.
 *
 * @since 0.1.0
 * @category utils
 */
export const endingsIn = (text: string, start: number, end: number): ReadonlyArray<"\r\n" | "\n"> => {
  const out: Array<"\r\n" | "\n"> = []
  for (let i = text.indexOf("\n", start); i !== -1 && i < end; i = text.indexOf("\n", i + 1)) {
    out.push(i > start && text.charCodeAt(i - 1) === 13 ? "\r\n" : "\n")
  }
  return out
}

/**
 * The line ending of the line `index` is on: the first ending at or after it, else the last one
 * before it, else `\n`.
 *
 * @since 0.1.0
 * @category utils
 */
export const endingAt = (text: string, index: number): "\r\n" | "\n" => {
  const after = text.indexOf("\n", index)
  if (after !== -1) return endingFound(text, after)
  const before = index === 0 ? -1 : text.lastIndexOf("\n", index - 1)
  return before === -1 ? "\n" : endingFound(text, before)
}

/**
 * Writes replacement text over `text[start, end)` with the endings of the text it replaces: its
 * k-th `\n` takes the k-th line ending of the replaced range (the last one when it has more lines,
 * the ending of the line the range is on when the range has none). A replacement holding a `\r`
 * is written as given (the caller chose its endings).
 *
 * @since 0.1.0
 * @category utils
 */
export const replacing = (replacement: string, text: string, start: number, end: number): string => {
  if (replacement.includes("\r") || !replacement.includes("\n")) return replacement
  const endings = endingsIn(text, start, end)
  const fallback = endings.at(-1) ?? endingAt(text, start)
  let k = 0
  return replacement.replace(/\n/g, () => endings[k++] ?? fallback)
}

/**
 * Writes `\n` of `text` as `ending`, unless the text holds a `\r` already (then it is written as
 * given: the caller chose its endings).
 *
 * @since 0.1.0
 * @category utils
 */
export const withEnding = (text: string, ending: "\r\n" | "\n"): string =>
  ending === "\n" || text.includes("\r") ? text : text.replace(/\n/g, "\r\n")
