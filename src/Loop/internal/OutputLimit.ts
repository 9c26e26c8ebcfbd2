/**
 * The cap of one step's output (issue 26): the bytes a model streams in one step (text, reasoning
 * and tool-call argument deltas, UTF-8) stop at a limit. The chunk that would pass it is dropped,
 * the stream is stopped (its consumer ends, so the HTTP request is interrupted) and the step ends
 * with an in-band `finish {kind: "error", code: "OUTPUT_LIMIT"}` logged after the kept chunks: the
 * partial output stays in the log as the step's chunks, and the turn fails with that code (L-20).
 *
 * [DECISION] The default is 8 MiB: the largest output budgets models offer today (about 128k
 * tokens of text plus as much reasoning) stream well under 2 MiB, so only a runaway model meets it,
 * while the memory of one step (chunks, assembled blocks, the recorded message) stays a few tens of
 * MiB and every event stays under the event cap (`Records.MAX_EVENT_BYTES`) even when escaped.
 *
 * @since 0.1.0
 */
import type { StreamChunk } from "../../Llm/StreamChunk.js"

/**
 * The default cap of one step's streamed output, in bytes (8 MiB).
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_MAX_OUTPUT_BYTES = 8 * 1024 * 1024

/**
 * The canonical code of a step cut at the output cap.
 *
 * @since 0.1.0
 * @category constants
 */
export const CODE = "OUTPUT_LIMIT"

/**
 * The UTF-8 bytes a chunk adds to a step's output (0 for structure: block starts and ends, usage,
 * finish).
 *
 * @since 0.1.0
 * @category utils
 */
export const bytesOf = (chunk: StreamChunk): number => {
  switch (chunk.type) {
    case "text-delta":
    case "reasoning-delta":
      return Buffer.byteLength(chunk.text, "utf8")
    case "tool-call-delta":
      return Buffer.byteLength(chunk.argumentsDelta, "utf8") + (chunk.name === undefined ? 0 : Buffer.byteLength(chunk.name, "utf8"))
    default:
      return 0
  }
}

/**
 * The in-band finish that ends a step cut at the cap.
 *
 * @since 0.1.0
 * @category constructors
 */
export const finish = (limit: number): StreamChunk => ({
  type: "finish",
  reason: {
    kind: "error",
    code: CODE,
    message: `the model's output passed ${limit} bytes in one step (--max-output-bytes); the stream was cut and the partial output kept in the log`
  }
})

/**
 * Where a batch passes the cap: the number of its chunks that fit (`cut` when one does not) and
 * the step's byte count after them.
 *
 * @since 0.1.0
 * @category utils
 */
export const fit = (
  chunks: ReadonlyArray<StreamChunk>,
  streamed: number,
  limit: number
): { readonly kept: number; readonly streamed: number; readonly cut: boolean } => {
  let total = streamed
  for (let i = 0; i < chunks.length; i++) {
    const next = total + bytesOf(chunks[i]!)
    if (next > limit) return { kept: i, streamed: total, cut: true }
    total = next
  }
  return { kept: chunks.length, streamed: total, cut: false }
}
