/**
 * Narrowing of values whose type is not known (wire payloads, thrown values): the one copy of each small
 * check the areas share.
 *
 * @since 0.1.0
 */

/**
 * `true` for a non-null, non-array object (a JSON object or any record-like value).
 *
 * @since 0.1.0
 * @category guards
 */
export const isRecord = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * The non-empty string `code` a value carries (an errno-style error, a typed failure), else `undefined`;
 * a `code` getter that throws counts as absent.
 *
 * @since 0.1.0
 * @category utils
 */
export const codeOf = (value: unknown): string | undefined => {
  try {
    if (typeof value === "object" && value !== null && "code" in value) {
      const code = (value as { readonly code: unknown }).code
      if (typeof code === "string" && code !== "") return code
    }
  } catch {
    // an unreadable `code` is simply absent
  }
  return undefined
}
