/**
 * Session ids as people type them: one format for every new session (`harness-session-<uuid>`,
 * for `run`, `chat` and `sessions fork` alike) and unique-prefix matching wherever an id is
 * accepted (`run --resume`, `chat --resume`, every `sessions` subcommand).
 *
 * Matching (pure, {@link match}): an exact id wins; otherwise every stored id that starts with the
 * input, or whose part after `harness-session-` does, is a candidate (so `3f2a` finds
 * `harness-session-3f2a…`, and old bare-UUID ids match too). One candidate is the answer; none or
 * several are one-line errors in the user's words, listing the candidates.
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"

/**
 * The prefix of every id the CLI gives a new session.
 *
 * @since 0.1.0
 * @category constants
 */
export const PREFIX = "harness-session-"

/**
 * A new session id (`harness-session-<uuid>`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (): string => `${PREFIX}${crypto.randomUUID()}`

/**
 * The short form of an id people can type (the part after `harness-session-`).
 *
 * @since 0.1.0
 * @category utils
 */
export const short = (id: string): string => id.startsWith(PREFIX) ? id.slice(PREFIX.length) : id

/**
 * The most candidates an ambiguity error lists.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_LISTED = 5

/**
 * The stored id the user meant, or the one-line reason there is none.
 *
 * @since 0.1.0
 * @category utils
 */
export const match = (input: string, ids: ReadonlyArray<string>): Result.Result<string, string> => {
  const wanted = input.trim()
  if (wanted === "") return Result.fail("a session id is empty")
  if (ids.includes(wanted)) return Result.succeed(wanted)
  const candidates = ids.filter((id) => id.startsWith(wanted) || short(id).startsWith(wanted))
  if (candidates.length === 1) return Result.succeed(candidates[0]!)
  if (candidates.length === 0) {
    return Result.fail(`no session matches "${wanted}" (see harness sessions list)`)
  }
  const listed = candidates.slice(0, MAX_LISTED).join(", ")
  const more = candidates.length > MAX_LISTED ? `, and ${candidates.length - MAX_LISTED} more` : ""
  return Result.fail(`"${wanted}" matches ${candidates.length} sessions: ${listed}${more}; type more of the id`)
}
