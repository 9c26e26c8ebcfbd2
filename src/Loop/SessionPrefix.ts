/**
 * The session prefix (L-35): request-only messages placed after the system slot and before all
 * history. Composed once per loop instance, before its first `pre-step`, by the `session-prefix`
 * waterfall seeded with a frozen empty list; a contributor returns `[mine, ...downstream]`
 * (`Effect.map(next(), (rest) => [mine, ...rest])`), so contributions come out in registration
 * order. The result is deep-copied and frozen (a contributor mutating its object later has no
 * effect), cached by the agent and reused verbatim for every request of the instance. It is
 * recorded only as the header's `messagePrefix`, never in `deriveMessages()`; empty = omitted.
 *
 * Decisions (DEC-10): a prefix that is not a list of `{role, content}` messages in lossless JSON
 * fails the turn ({@link SessionPrefixError} `INVALID_PREFIX`) like any other listener failure.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Json from "../Llm/Json.js"
import type { Message } from "../Llm/Message.js"
import type { HookAgent } from "./Hooks.js"
import type * as Hooks from "./Hooks.js"
import type { HookFailure } from "./Interception.js"
import type { StepSignal } from "./StepSignal.js"

/**
 * The composed prefix is not a list of lossless-JSON messages.
 *
 * @since 0.1.0
 * @category errors
 */
export class SessionPrefixError extends Schema.TaggedError<SessionPrefixError>()("SessionPrefixError", {
  code: Schema.Literal("INVALID_PREFIX"),
  message: Schema.String
}) {}

const roles: ReadonlySet<string> = new Set(["system", "user", "assistant"])

/**
 * Validates, deep-copies and freezes a composed prefix.
 *
 * @since 0.1.0
 * @category constructors
 */
export const freeze = (prefix: ReadonlyArray<Message>): Result.Result<ReadonlyArray<Message>, SessionPrefixError> => {
  const snap = Json.snapshotOf(prefix)
  if (Result.isFailure(snap)) {
    return Result.fail(new SessionPrefixError({ code: "INVALID_PREFIX", message: `session prefix: ${snap.failure.message}` }))
  }
  // what a listener returned is checked as the JSON it is, whatever its declared type
  const value: unknown = snap.success
  if (!Array.isArray(value)) {
    return Result.fail(new SessionPrefixError({ code: "INVALID_PREFIX", message: "session prefix must be a list of messages" }))
  }
  for (const m of value as ReadonlyArray<Json.Json>) {
    const ok = typeof m === "object" && m !== null && !Array.isArray(m) &&
      typeof (m as Json.JsonObject)["role"] === "string" && roles.has((m as Json.JsonObject)["role"] as string) &&
      Array.isArray((m as Json.JsonObject)["content"])
    if (!ok) {
      return Result.fail(
        new SessionPrefixError({ code: "INVALID_PREFIX", message: "session prefix entries must be {role, content} messages" })
      )
    }
  }
  return Result.succeed(snap.success)
}

const seed: ReadonlyArray<Message> = Object.freeze([])

/**
 * Runs the `session-prefix` waterfall once and returns the frozen prefix (L-35).
 *
 * @since 0.1.0
 * @category constructors
 */
export const compose = Effect.fn("SessionPrefix.compose")((
  hooks: Hooks.Service,
  agent: HookAgent,
  signal: StepSignal
): Effect.Effect<ReadonlyArray<Message>, HookFailure | SessionPrefixError> =>
  Effect.flatMap(
    hooks.sessionPrefix.run(agent.id, { agent, prefix: seed, signal }, (input) => Effect.succeed(input.prefix)),
    (prefix) => Effect.fromResult(freeze(prefix))
  ))
