/**
 * Maps an MCP `tools/call` result to tool-result content.
 *
 * - `text` → a text block.
 * - `image` / `audio` → a text stand-in `[image: image/png, 1234 bytes]` (the harness's content
 *   vocabulary has no media block the adapters would send; the model learns what it got).
 * - `resource` (embedded): a text resource → `[resource <uri> (<mime>)]` then its text; a blob →
 *   a stand-in with type and size. `resource_link` → `[resource link: <uri> (<name>, <mime>)]`.
 * - No content but `structuredContent` → its JSON. Unknown content types → a stand-in naming the type.
 * - The text is capped at {@link MAX_RESULT_BYTES} (UTF-8) like the built-in tools' output, with
 *   a visible marker stating the full size.
 *
 * `isError` is not decided here: the caller turns an error result into a tool error.
 *
 * @since 0.1.0
 */
import * as ContentBlock from "../Llm/ContentBlock.js"

/**
 * The cap of a result's text (the built-in tools' output cap: 256 KiB).
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_RESULT_BYTES = 256 * 1024

const base64Bytes = (data: string): number => {
  const clean = data.replace(/\s/g, "")
  const pad = clean.endsWith("==") ? 2 : clean.endsWith("=") ? 1 : 0
  return Math.max(0, Math.floor((clean.length * 3) / 4) - pad)
}

const field = (o: Readonly<Record<string, unknown>>, k: string): string | undefined =>
  typeof o[k] === "string" ? o[k] : undefined

const part = (item: unknown): string => {
  if (typeof item !== "object" || item === null) return `[unsupported content]`
  const o = item as Readonly<Record<string, unknown>>
  switch (o["type"]) {
    case "text":
      return field(o, "text") ?? ""
    case "image":
    case "audio":
      return `[${String(o["type"])}: ${field(o, "mimeType") ?? "unknown type"}, ${base64Bytes(field(o, "data") ?? "")} bytes]`
    case "resource": {
      const r = typeof o["resource"] === "object" && o["resource"] !== null
        ? o["resource"] as Readonly<Record<string, unknown>>
        : {}
      const uri = field(r, "uri") ?? "?"
      const mime = field(r, "mimeType")
      const text = field(r, "text")
      if (text !== undefined) return `[resource ${uri}${mime === undefined ? "" : ` (${mime})`}]\n${text}`
      return `[resource ${uri}: ${mime ?? "unknown type"}, ${base64Bytes(field(r, "blob") ?? "")} bytes]`
    }
    case "resource_link": {
      const details = [field(o, "name"), field(o, "mimeType")].filter((d): d is string => d !== undefined)
      return `[resource link: ${field(o, "uri") ?? "?"}${details.length > 0 ? ` (${details.join(", ")})` : ""}]`
    }
    default:
      return `[unsupported content: ${JSON.stringify(o["type"] ?? null)}]`
  }
}

/**
 * Caps text at `maxBytes` UTF-8 bytes (on a character boundary) with a marker stating the size.
 *
 * @since 0.1.0
 * @category utils
 */
export const cap = (text: string, maxBytes: number = MAX_RESULT_BYTES): string => {
  const total = Buffer.byteLength(text)
  if (total <= maxBytes) return text
  let cut = Buffer.from(text).subarray(0, maxBytes).toString("utf8")
  if (cut.endsWith("\uFFFD")) cut = cut.slice(0, -1)
  return `${cut}\n… [output truncated: ${total} bytes in total, ${maxBytes} shown]`
}

/**
 * The result's content as one text (parts joined by newlines), capped.
 *
 * @since 0.1.0
 * @category mapping
 */
export const toText = (result: { readonly content?: ReadonlyArray<unknown>; readonly structuredContent?: unknown }): string => {
  const content = Array.isArray(result.content) ? result.content : []
  if (content.length === 0 && result.structuredContent !== undefined) return cap(JSON.stringify(result.structuredContent))
  return cap(content.map(part).join("\n"))
}

/**
 * The result's content as tool-result blocks.
 *
 * @since 0.1.0
 * @category mapping
 */
export const toContent = (
  result: { readonly content?: ReadonlyArray<unknown>; readonly structuredContent?: unknown }
): ReadonlyArray<ContentBlock.ContentBlock> => [ContentBlock.text(toText(result))]
