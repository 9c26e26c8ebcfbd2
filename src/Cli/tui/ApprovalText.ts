/**
 * What the approval panel says about "always" (issue 34): the exact rule each answer saves and
 * where it goes, so the panel never promises more or less than is saved.
 *
 * - `a`: the rule is allowed for the rest of this chat (not written anywhere);
 * - `p`: the rule is also written to the project's `.effect-harness/settings.local.json`
 *   (`permissions.allow`), so later chats in this workspace allow it too.
 *
 * What a rule covers (from `settings/PermissionRule.suggest`): `Bash(npm test:*)` any `npm test`
 * command; `Edit(./src/**)` every file under `src/` (an edit's rule covers the file's directory);
 * `Edit(./notes.txt)` that file only (a file at the workspace root).
 *
 * @since 0.1.0
 */

/**
 * Where `p` ("always, for this project") saves the rule, relative to the workspace.
 *
 * @since 0.1.0
 * @category constants
 */
export const PROJECT_SETTINGS = ".effect-harness/settings.local.json"

/**
 * A plain-words reading of a rule: what it allows.
 *
 * @since 0.1.0
 * @category utils
 */
export const covers = (rule: string): string => {
  const m = /^(\w+)\((.*)\)$/s.exec(rule)
  if (m === null) return `every ${rule.toLowerCase()} call`
  const [, tool = "", pattern = ""] = m
  if (tool === "Bash") {
    return pattern.endsWith(":*") ? `any command starting with "${pattern.slice(0, -2)}"` : `the command "${pattern}" exactly`
  }
  const what = tool === "Edit" ? "edits" : tool === "Write" ? "writes" : `${tool} calls`
  if (pattern.endsWith("/**")) return `${what} of every file under ${pattern.slice(0, -3) || "."}/`
  return `${what} of ${pattern} only`
}

/**
 * The panel lines of the "always" answers for `rule`.
 *
 * @since 0.1.0
 * @category utils
 */
export const alwaysLines = (rule: string): ReadonlyArray<string> => [
  `a always allow ${rule} for this chat (${covers(rule)})`,
  `p always allow ${rule} in this project (saved to ${PROJECT_SETTINGS})`
]
