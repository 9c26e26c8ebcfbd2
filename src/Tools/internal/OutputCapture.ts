/**
 * Bounded capture of a process's output: the first `headBytes` and the last `tailBytes` bytes are
 * kept, the middle is counted and replaced by a visible notice when rendered.
 *
 * @since 0.1.0
 */

const isContinuation = (b: number | undefined): boolean => b !== undefined && (b & 0xc0) === 0x80

/**
 * A head+tail output buffer. Not shared across fibers: owned by one command run.
 *
 * @since 0.1.0
 * @category models
 */
export class OutputCapture {
  private readonly head: Array<Uint8Array> = []
  private headSize = 0
  private tail: Array<Uint8Array> = []
  private tailSize = 0
  /** total bytes received */
  total = 0

  constructor(readonly headBytes: number, readonly tailBytes: number) {}

  /** appends a chunk */
  push(chunk: Uint8Array): void {
    this.total += chunk.length
    let rest = chunk
    if (this.headSize < this.headBytes) {
      const take = Math.min(rest.length, this.headBytes - this.headSize)
      this.head.push(rest.subarray(0, take))
      this.headSize += take
      rest = rest.subarray(take)
    }
    if (rest.length === 0) return
    this.tail.push(rest)
    this.tailSize += rest.length
    if (this.tailSize > this.tailBytes * 2) this.compactTail()
  }

  private compactTail(): void {
    const all = concat(this.tail, this.tailSize)
    const kept = all.subarray(all.length - this.tailBytes)
    this.tail = [kept]
    this.tailSize = kept.length
  }

  /** `true` when bytes were dropped */
  get truncated(): boolean {
    return this.total > this.headBytes + this.tailBytes
  }

  /** the captured text with a notice in place of dropped bytes */
  render(): string {
    const decoder = new TextDecoder("utf-8")
    let head = concat(this.head, this.headSize)
    let tail = concat(this.tail, this.tailSize)
    if (tail.length > this.tailBytes) tail = tail.subarray(tail.length - this.tailBytes)
    if (!this.truncated) return decoder.decode(concat([head, tail], head.length + tail.length))
    // cut at character boundaries
    head = head.subarray(0, completeEnd(head))
    let start = 0
    while (start < tail.length && isContinuation(tail[start])) start++
    tail = tail.subarray(start)
    const omitted = this.total - head.length - tail.length
    return `${decoder.decode(head)}\n\n[... ${omitted} bytes of output omitted ...]\n\n${decoder.decode(tail)}`
  }
}

/** length of the longest prefix of `bytes` that does not end inside a UTF-8 sequence */
const completeEnd = (bytes: Uint8Array): number => {
  let lead = bytes.length - 1
  while (lead > 0 && isContinuation(bytes[lead])) lead--
  if (lead < 0) return 0
  const b = bytes[lead]!
  const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1
  return lead + need > bytes.length ? lead : bytes.length
}

const concat = (chunks: ReadonlyArray<Uint8Array>, size: number): Uint8Array => {
  if (chunks.length === 1) return chunks[0]!
  const out = new Uint8Array(size)
  let offset = 0
  for (const c of chunks) {
    out.set(c, offset)
    offset += c.length
  }
  return out
}
