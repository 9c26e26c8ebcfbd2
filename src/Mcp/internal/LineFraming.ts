/**
 * Newline framing of a stdio MCP server's output with a bound on one message (issue 26). The
 * SDK's `ReadBuffer` throws from the stream's `data` handler when a message passes 10 MiB, which
 * crashes the process; this framing instead skips the oversized line (holding at most the limit)
 * and reports it with the JSON-RPC id it carried, read from the line's first or last bytes, so
 * the transport can fail that one call.
 *
 * @since 0.1.0
 */

/**
 * The largest message a stdio server may send (10 MiB, the SDK's bound).
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_MESSAGE_BYTES = 10 * 1024 * 1024

/**
 * A framed line, or an oversized one that was skipped.
 *
 * @since 0.1.0
 * @category models
 */
export type Framed =
  | { readonly _tag: "Line"; readonly text: string }
  | { readonly _tag: "TooLong"; readonly bytes: number; readonly id: string | number | undefined }

const EDGE = 4096
const NL = 10

const idValue = (raw: string | undefined): string | number | undefined => {
  if (raw === undefined) return undefined
  try {
    const value: unknown = JSON.parse(raw)
    return typeof value === "string" || typeof value === "number" ? value : undefined
  } catch {
    return undefined
  }
}

const ID = String.raw`(-?\d+|"(?:[^"\\]|\\.)*")`
// an id that is the first member (after an optional "jsonrpc") or the last one of the object
const headId = new RegExp(String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*${ID}`)
const tailId = new RegExp(String.raw`"id"\s*:\s*${ID}\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?\}\s*$`)

/**
 * The id of a JSON-RPC message from its first and last bytes, when it stands first or last.
 *
 * @since 0.1.0
 * @category utils
 */
export const idOf = (head: string, tail: string): string | number | undefined =>
  idValue(headId.exec(head)?.[1]) ?? idValue(tailId.exec(tail)?.[1])

/**
 * The framing state: {@link LineFraming.append} bytes, get the complete lines.
 *
 * @since 0.1.0
 * @category models
 */
export class LineFraming {
  private pieces: Array<Buffer> = []
  private held = 0
  /** the current line is over the limit: its first bytes, its byte count and its last bytes */
  private skipping: { head: Buffer; bytes: number; tail: Buffer } | undefined = undefined

  constructor(private readonly maxBytes: number = MAX_MESSAGE_BYTES) {}

  /** Appends output; returns the lines it completes (an oversized line as `TooLong`). */
  append(chunk: Buffer): Array<Framed> {
    const out: Array<Framed> = []
    let pos = 0
    while (pos < chunk.length) {
      const nl = chunk.indexOf(NL, pos)
      const end = nl === -1 ? chunk.length : nl
      this.add(chunk.subarray(pos, end))
      if (nl === -1) break
      out.push(this.finish())
      pos = nl + 1
    }
    return out
  }

  /** Forgets a partial line. */
  clear(): void {
    this.pieces = []
    this.held = 0
    this.skipping = undefined
  }

  private add(bytes: Buffer): void {
    if (bytes.length === 0) return
    if (this.skipping !== undefined) {
      this.skipping.bytes += bytes.length
      const tail = Buffer.concat([this.skipping.tail, bytes])
      this.skipping.tail = tail.length > EDGE ? Buffer.from(tail.subarray(tail.length - EDGE)) : tail
      return
    }
    if (this.held + bytes.length > this.maxBytes) {
      const all = Buffer.concat([...this.pieces, bytes])
      this.skipping = {
        head: Buffer.from(all.subarray(0, EDGE)),
        bytes: all.length,
        tail: Buffer.from(all.subarray(Math.max(0, all.length - EDGE)))
      }
      this.pieces = []
      this.held = 0
      return
    }
    // a copy: the stream may reuse its buffer
    this.pieces.push(Buffer.from(bytes))
    this.held += bytes.length
  }

  private finish(): Framed {
    const skipped = this.skipping
    if (skipped !== undefined) {
      this.skipping = undefined
      return { _tag: "TooLong", bytes: skipped.bytes, id: idOf(skipped.head.toString("utf8"), skipped.tail.toString("utf8")) }
    }
    const text = Buffer.concat(this.pieces, this.held).toString("utf8").replace(/\r$/, "")
    this.pieces = []
    this.held = 0
    return { _tag: "Line", text }
  }
}
