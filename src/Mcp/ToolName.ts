/**
 * Loop tool names for MCP tools: `mcp__<server>__<tool>`, the convention of Claude Code (and of the
 * hooks bridge's matchers, HB-4).
 *
 * Providers accept `^[A-Za-z0-9_-]{1,64}$`, so every other character of the server and tool names
 * becomes `_`, and a name longer than {@link MAX_LENGTH} is cut and ends in `_` plus 8 hex digits
 * of a hash of the full name (distinct long names stay distinct). Two tools that still map to the
 * same name are a collision: {@link assign} keeps the first and reports the others.
 *
 * @since 0.1.0
 */
import { createHash } from "node:crypto"

/**
 * The provider limit on tool name length.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_LENGTH = 64

/**
 * `name` with every character outside `[A-Za-z0-9_-]` replaced by `_`.
 *
 * @since 0.1.0
 * @category utils
 */
export const sanitize = (name: string): string => name.replace(/[^A-Za-z0-9_-]/g, "_")

/**
 * The loop tool name of `tool` on `server`.
 *
 * @since 0.1.0
 * @category utils
 */
export const loopName = (server: string, tool: string): string => {
  const full = `mcp__${sanitize(server)}__${sanitize(tool)}`
  if (full.length <= MAX_LENGTH) return full
  const hash = createHash("sha256").update(`${server}\0${tool}`).digest("hex").slice(0, 8)
  return `${full.slice(0, MAX_LENGTH - 9)}_${hash}`
}

/**
 * `true` for a loop name of an MCP tool.
 *
 * @since 0.1.0
 * @category utils
 */
export const isMcpName = (name: string): boolean => name.startsWith("mcp__")

/**
 * Assigns loop names to `(server, tool)` pairs in order; a pair whose name is taken (by an earlier
 * pair or by `reserved`) is reported as a collision instead.
 *
 * @since 0.1.0
 * @category utils
 */
export const assign = <A extends { readonly server: string; readonly tool: string }>(
  items: ReadonlyArray<A>,
  reserved: ReadonlySet<string> = new Set()
): {
  readonly named: ReadonlyArray<A & { readonly name: string }>
  readonly collisions: ReadonlyArray<A & { readonly name: string; readonly with: string }>
} => {
  const taken = new Map<string, string>()
  for (const r of reserved) taken.set(r, r)
  const named: Array<A & { readonly name: string }> = []
  const collisions: Array<A & { readonly name: string; readonly with: string }> = []
  for (const item of items) {
    const name = loopName(item.server, item.tool)
    const owner = taken.get(name)
    if (owner !== undefined) {
      collisions.push({ ...item, name, with: owner })
      continue
    }
    taken.set(name, `tool "${item.tool}" of MCP server "${item.server}"`)
    named.push({ ...item, name })
  }
  return { named, collisions }
}
