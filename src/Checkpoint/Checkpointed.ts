/**
 * Tools with their workspace changes journaled: a wrapper that runs a tool's body inside the
 * {@link Journal.Journal} (read at call time, so an unjournaled harness pays nothing).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type * as Tool from "../Loop/Tool.js"
import * as Journal from "./Journal.js"

/**
 * What a tool changes: the workspace paths named by some of its arguments, or anything (a scan).
 *
 * @since 0.1.0
 * @category models
 */
export type Changes =
  | { readonly _tag: "Paths"; readonly paths: (args: unknown) => ReadonlyArray<string> }
  | { readonly _tag: "Scan" }

/**
 * The paths named by string arguments `keys`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const pathArgs = (...keys: ReadonlyArray<string>): Changes => ({
  _tag: "Paths",
  paths: (args) =>
    typeof args !== "object" || args === null
      ? []
      : keys.flatMap((k) => {
        const v: unknown = (args as Record<string, unknown>)[k]
        return typeof v === "string" && v !== "" ? [v] : []
      })
})

/**
 * Anything in the workspace (a before/after scan).
 *
 * @since 0.1.0
 * @category constants
 */
export const scan: Changes = { _tag: "Scan" }

/**
 * The tool with its body journaled.
 *
 * @since 0.1.0
 * @category combinators
 */
export const wrap = <R>(tool: Tool.Tool<R>, changes: Changes): Tool.Tool<R> => ({
  ...tool,
  execute: (args, context) =>
    Effect.gen(function*() {
      const journal = yield* Journal.Journal
      if (!journal.enabled) return yield* tool.execute(args, context)
      return yield* changes._tag === "Scan"
        ? journal.aroundScan(tool.name, tool.execute(args, context))
        : journal.aroundPaths(tool.name, changes.paths(args), tool.execute(args, context))
    })
})

/**
 * How the built-in tools change the workspace: `write` and `edit` their `file_path`, `bash`
 * anything.
 *
 * @since 0.1.0
 * @category constants
 */
export const builtin: Readonly<Record<string, Changes>> = {
  write: pathArgs("file_path"),
  edit: pathArgs("file_path"),
  bash: scan
}

/**
 * {@link wrap} with the {@link builtin} rule for the tool's name (other tools unchanged).
 *
 * @since 0.1.0
 * @category combinators
 */
export const wrapBuiltin = <R>(tool: Tool.Tool<R>): Tool.Tool<R> => {
  const changes = builtin[tool.name]
  return changes === undefined ? tool : wrap(tool, changes)
}
