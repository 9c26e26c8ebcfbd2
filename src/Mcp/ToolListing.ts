/**
 * A `tools/list` page read tool by tool (issue 26): the SDK's `listTools` validates the whole page
 * at once, so one tool with a malformed definition (an `inputSchema` that is not an object schema,
 * a missing name) failed the listing and took every tool of the server with it. {@link parsePage}
 * checks each tool against the SDK's own `ToolSchema` and keeps the malformed ones apart, with a
 * one-line reason, so only they are skipped.
 *
 * @since 0.1.0
 */
import { type Tool as SdkTool, ToolSchema } from "@modelcontextprotocol/sdk/types.js"
import { isRecord } from "../Llm/internal/Unknown.js"

/**
 * A listed tool whose definition the SDK's schema rejects: its name (or `#<index>` when it has
 * none) and why.
 *
 * @since 0.1.0
 * @category models
 */
export interface MalformedTool {
  readonly name: string
  readonly malformed: string
}

/**
 * One entry of a listing: a valid tool or a malformed one.
 *
 * @since 0.1.0
 * @category models
 */
export type ListedTool = SdkTool | MalformedTool

/**
 * Whether an entry is malformed.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isMalformed = (tool: ListedTool): tool is MalformedTool => "malformed" in tool

/**
 * The valid tools of a listing.
 *
 * @since 0.1.0
 * @category utils
 */
export const valid = (listing: ReadonlyArray<ListedTool>): ReadonlyArray<SdkTool> =>
  listing.filter((t): t is SdkTool => !isMalformed(t))

/**
 * Reads one `tools/list` result: each tool checked alone. `undefined` when the page itself is not
 * a listing (no `tools` array), which fails the listing as before.
 *
 * @since 0.1.0
 * @category constructors
 */
export const parsePage = (
  result: unknown
): { readonly tools: ReadonlyArray<ListedTool>; readonly nextCursor: string | undefined } | undefined => {
  if (!isRecord(result) || !Array.isArray(result["tools"])) return undefined
  const tools = result["tools"].map((raw: unknown, index): ListedTool => {
    const parsed = ToolSchema.safeParse(raw)
    if (parsed.success) return parsed.data
    const name = isRecord(raw) && typeof raw["name"] === "string" && raw["name"] !== "" ? raw["name"] : `#${index}`
    const issue = parsed.error.issues[0]
    const where = issue === undefined || issue.path.length === 0 ? "" : `${issue.path.map(String).join(".")}: `
    return { name, malformed: `its definition is malformed (${where}${issue?.message ?? "invalid"})` }
  })
  const cursor = result["nextCursor"]
  return { tools, nextCursor: typeof cursor === "string" ? cursor : undefined }
}
