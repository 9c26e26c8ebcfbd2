/**
 * A `fetch` for the MCP HTTP transports (streamable HTTP and HTTP+SSE) whose response bodies are
 * bounded like the stdio transport's messages (issue 26): a JSON body over the limit, or an SSE
 * event that runs past it without an event boundary, fails that response instead of being held
 * in memory without end.
 *
 * @since 0.1.0
 */
import { MAX_MESSAGE_BYTES } from "./LineFraming.js"

/**
 * The fetch signature the MCP SDK's transports accept.
 *
 * @since 0.1.0
 * @category models
 */
export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>

const LF = 10
const CR = 13

/**
 * Counts the bytes of one message: for an event stream, the bytes since the last blank line
 * (`\n\n` or `\r\n\r\n`); otherwise the whole body.
 */
const limiter = (maxBytes: number, eventStream: boolean): TransformStream<Uint8Array, Uint8Array> => {
  let pending = 0
  let p1 = -1
  let p2 = -1
  return new TransformStream({
    transform(chunk, controller) {
      if (eventStream) {
        let boundary = -1
        for (let i = 0; i < chunk.length; i++) {
          const b = chunk[i]!
          if (b === LF && (p1 === LF || (p1 === CR && p2 === LF))) boundary = i
          p2 = p1
          p1 = b
        }
        pending = boundary === -1 ? pending + chunk.length : chunk.length - boundary - 1
      } else pending += chunk.length
      if (pending > maxBytes) {
        controller.error(new Error(`the MCP server sent a message over the ${maxBytes / (1024 * 1024)} MiB limit`))
      } else controller.enqueue(chunk)
    }
  })
}

/**
 * Wraps `base` so every response body is bounded per message.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (maxBytes: number = MAX_MESSAGE_BYTES, base: FetchLike = fetch): FetchLike => async (url, init) => {
  const response = await base(url, init)
  if (response.body === null) return response
  const eventStream = (response.headers.get("content-type") ?? "").includes("text/event-stream")
  return new Response(response.body.pipeThrough(limiter(maxBytes, eventStream)), {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers
  })
}
