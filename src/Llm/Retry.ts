/**
 * The model-request retry policy (DEC-3, E-6), applied per attempt by `Llm.stream`.
 *
 * Rules:
 * - an attempt is retried only while it has emitted **no chunk**; once a chunk reached the
 *   consumer, a failure is final here and goes to request recovery (L-20), because the session log
 *   is append-only and never rewritten;
 * - retryable codes are those of {@link LlmError.isRetryable}: `RATE_LIMIT`, `SERVER`, `TRANSPORT`,
 *   `STREAM_CLOSED`, `TIMEOUT`; everything else (`AUTH`, `INVALID_REQUEST`,
 *   `CONTEXT_WINDOW_EXCEEDED`, `MALFORMED_RESPONSE`, other `HTTP_4xx`, registry errors) fails at once;
 * - attempts are bounded by {@link RetryPolicy.maxAttempts} (the first attempt counts);
 * - each attempt has a **first-byte timeout** (time to its first chunk) and an **idle timeout**
 *   (time between two chunks); both fail with a `ProviderError` of code `TIMEOUT`.
 *
 * Decisions where the spec is silent (DEC-10):
 * - A `retryAfterMillis` carried by the error (the provider's `Retry-After`, seconds or HTTP date,
 *   parsed by the adapter) is honoured as given, **clamped** to {@link RetryPolicy.retryAfterCap}.
 *   Without it the delay is exponential: `baseDelay * 2^(attempt-1)`, capped at `maxDelay`, then
 *   reduced by a random fraction of up to `jitter` (so `jitter: 0.25` waits 75..100 % of it).
 *   Server-given delays get no jitter: the server named the moment.
 * - {@link RetryPolicy.maxElapsed} is an overall deadline for *retrying*, not for streaming: no new
 *   attempt starts when waiting for it would end later than `maxElapsed` after the first attempt
 *   started. A long healthy stream is never cut by it.
 * - A first-byte timeout is retryable (nothing was emitted); an idle timeout after a chunk is not.
 * - Every retry is logged at warning level with the code, attempt and delay; nothing is swallowed.
 *
 * Configure with a Layer or per stream:
 *
 * ```ts
 * program.pipe(Effect.provide(Retry.layer({ maxAttempts: 2, firstByteTimeout: "10 seconds" })))
 * Llm.stream(request).pipe(Stream.provideService(Retry.Policy, Retry.policy({ maxAttempts: 1 })))
 * ```
 *
 * @since 0.1.0
 */
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import { isRetryable, type LlmError, ProviderError } from "./LlmError.js"

/**
 * Every knob of the retry policy.
 *
 * @since 0.1.0
 * @category models
 */
export interface RetryPolicy {
  /** total attempts including the first one; `1` disables retries (default 4) */
  readonly maxAttempts: number
  /** first backoff delay (default 500 ms) */
  readonly baseDelay: Duration.Duration
  /** upper bound of a computed backoff delay (default 30 s) */
  readonly maxDelay: Duration.Duration
  /** upper bound of a server-given `Retry-After` delay (default 60 s) */
  readonly retryAfterCap: Duration.Duration
  /** fraction in [0, 1] by which a backoff delay is randomly shortened (default 0.25) */
  readonly jitter: number
  /** time allowed until an attempt's first chunk (default 60 s; `Duration.infinity` disables) */
  readonly firstByteTimeout: Duration.Duration
  /** time allowed between two chunks of an attempt (default 120 s; `Duration.infinity` disables) */
  readonly idleTimeout: Duration.Duration
  /** no retry starts after this much time since the first attempt began (default 5 min) */
  readonly maxElapsed: Duration.Duration
}

/**
 * Overrides for {@link policy}; durations accept any `DurationInput` (`"2 seconds"`, millis, …).
 *
 * @since 0.1.0
 * @category models
 */
export interface RetryPolicyInput {
  readonly maxAttempts?: number
  readonly baseDelay?: Duration.DurationInput
  readonly maxDelay?: Duration.DurationInput
  readonly retryAfterCap?: Duration.DurationInput
  readonly jitter?: number
  readonly firstByteTimeout?: Duration.DurationInput
  readonly idleTimeout?: Duration.DurationInput
  readonly maxElapsed?: Duration.DurationInput
}

/**
 * The default policy: 4 attempts, 500 ms base, 30 s max backoff, 60 s Retry-After cap, 25 %
 * jitter, 60 s first-byte timeout, 120 s idle timeout, 5 min retry deadline.
 *
 * @since 0.1.0
 * @category constructors
 */
export const defaultPolicy: RetryPolicy = {
  maxAttempts: 4,
  baseDelay: Duration.millis(500),
  maxDelay: Duration.seconds(30),
  retryAfterCap: Duration.seconds(60),
  jitter: 0.25,
  firstByteTimeout: Duration.seconds(60),
  idleTimeout: Duration.seconds(120),
  maxElapsed: Duration.minutes(5)
}

/**
 * Builds a policy from the defaults and overrides. Invalid numbers are a defect of the caller's
 * configuration: `maxAttempts` must be a positive integer and `jitter` within [0, 1].
 *
 * @since 0.1.0
 * @category constructors
 */
export const policy = (overrides: RetryPolicyInput = {}): RetryPolicy => {
  const maxAttempts = overrides.maxAttempts ?? defaultPolicy.maxAttempts
  const jitter = overrides.jitter ?? defaultPolicy.jitter
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) {
    throw new RangeError(`Retry.policy: maxAttempts must be a positive integer, got ${maxAttempts}`)
  }
  if (!(jitter >= 0 && jitter <= 1)) throw new RangeError(`Retry.policy: jitter must be within [0, 1], got ${jitter}`)
  const d = (value: Duration.DurationInput | undefined, fallback: Duration.Duration) =>
    value === undefined ? fallback : Duration.decode(value)
  return {
    maxAttempts,
    jitter,
    baseDelay: d(overrides.baseDelay, defaultPolicy.baseDelay),
    maxDelay: d(overrides.maxDelay, defaultPolicy.maxDelay),
    retryAfterCap: d(overrides.retryAfterCap, defaultPolicy.retryAfterCap),
    firstByteTimeout: d(overrides.firstByteTimeout, defaultPolicy.firstByteTimeout),
    idleTimeout: d(overrides.idleTimeout, defaultPolicy.idleTimeout),
    maxElapsed: d(overrides.maxElapsed, defaultPolicy.maxElapsed)
  }
}

/**
 * The policy in effect; defaults to {@link defaultPolicy} when nothing is provided.
 *
 * @since 0.1.0
 * @category tags
 */
export class Policy extends Context.Reference<Policy>()("effect-harness/Llm/Retry/Policy", {
  defaultValue: (): RetryPolicy => defaultPolicy
}) {}

/**
 * One retry about to happen: the failed attempt (1-based), the delay before the next one, and the
 * failure's canonical code and message.
 *
 * @since 0.1.0
 * @category models
 */
export interface RetryNotice {
  readonly provider?: string
  readonly attempt: number
  readonly delayMs: number
  readonly code: string
  readonly message: string
}

/**
 * Observer of retries (e.g. the CLI reports them to a `--json` consumer); called before the
 * backoff sleep, next to the warning log. Defaults to doing nothing.
 *
 * @since 0.1.0
 * @category tags
 */
export class Notices extends Context.Reference<Notices>()("effect-harness/Llm/Retry/Notices", {
  defaultValue: (): (notice: RetryNotice) => Effect.Effect<void> => () => Effect.void
}) {}

/**
 * A Layer overriding the policy (unset knobs keep their defaults).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (overrides: RetryPolicyInput = {}): Layer.Layer<Policy> =>
  Layer.sync(Policy, () => policy(overrides))

/**
 * What to do after a failed attempt.
 *
 * @since 0.1.0
 * @category models
 */
export type Decision =
  | { readonly _tag: "Fail"; readonly reason: "emitted" | "not-retryable" | "attempts" | "deadline" }
  | { readonly _tag: "Retry"; readonly delay: Duration.Duration }

/**
 * Decides whether attempt `attempt` (1-based) that failed with `error` is retried, and after which
 * delay. Pure; `random` in [0, 1) drives the jitter; `elapsedMillis` is the time since the first
 * attempt began.
 *
 * @since 0.1.0
 * @category utils
 */
export const decide = (options: {
  readonly policy: RetryPolicy
  readonly error: LlmError
  readonly attempt: number
  readonly emitted: boolean
  readonly elapsedMillis: number
  readonly random: number
}): Decision => {
  const { attempt, error, policy } = options
  if (options.emitted) return { _tag: "Fail", reason: "emitted" }
  if (!isRetryable(error)) return { _tag: "Fail", reason: "not-retryable" }
  if (attempt >= policy.maxAttempts) return { _tag: "Fail", reason: "attempts" }
  const delay = delayFor(policy, error, attempt, options.random)
  if (options.elapsedMillis + Duration.toMillis(delay) > Duration.toMillis(policy.maxElapsed)) {
    return { _tag: "Fail", reason: "deadline" }
  }
  return { _tag: "Retry", delay }
}

/**
 * The delay before the attempt after `attempt` (1-based): the error's `retryAfterMillis` clamped to
 * the cap, else exponential backoff capped at `maxDelay` and shortened by up to `jitter`.
 *
 * @since 0.1.0
 * @category utils
 */
export const delayFor = (policy: RetryPolicy, error: LlmError, attempt: number, random: number): Duration.Duration => {
  const retryAfter = error._tag === "ProviderError" ? error.retryAfterMillis : undefined
  if (retryAfter !== undefined && Number.isFinite(retryAfter) && retryAfter >= 0) {
    return Duration.millis(Math.min(retryAfter, Duration.toMillis(policy.retryAfterCap)))
  }
  const exponential = Duration.toMillis(policy.baseDelay) * 2 ** Math.max(0, attempt - 1)
  const capped = Math.min(exponential, Duration.toMillis(policy.maxDelay))
  return Duration.millis(Math.round(capped * (1 - policy.jitter * random)))
}

const timeoutError = (first: boolean, limit: Duration.Duration, provider: string | undefined): ProviderError =>
  new ProviderError({
    code: "TIMEOUT",
    message: first
      ? `no response from the model within ${Duration.format(limit)} (first-byte timeout)`
      : `model stream idle for ${Duration.format(limit)} (idle timeout)`,
    ...(provider === undefined ? {} : { provider })
  })

/**
 * Applies the first-byte and idle timeouts of `policy` to one attempt; `emitted` is set to `true`
 * as soon as the attempt yields its first chunk.
 *
 * @since 0.1.0
 * @category combinators
 */
export const withTimeouts = <A>(
  stream: Stream.Stream<A, LlmError>,
  policy: RetryPolicy,
  emitted: Ref.Ref<boolean>,
  provider?: string
): Stream.Stream<A, LlmError> => {
  const firstInfinite = !Duration.isFinite(policy.firstByteTimeout)
  const idleInfinite = !Duration.isFinite(policy.idleTimeout)
  return Stream.unwrapScoped(Effect.map(Stream.toPull(stream), (pull) =>
    Stream.repeatEffectChunkOption(
      Effect.flatMap(Ref.get(emitted), (did) => {
        const limit = did ? policy.idleTimeout : policy.firstByteTimeout
        const timed = (did ? idleInfinite : firstInfinite)
          ? pull
          : Effect.timeoutFail(pull, {
            duration: limit,
            onTimeout: () => Option.some<LlmError>(timeoutError(!did, limit, provider))
          })
        return did ? timed : Effect.tap(timed, (chunk) => Chunk.isEmpty(chunk) ? Effect.void : Ref.set(emitted, true))
      })
    )))
}

/**
 * Runs `attempt(n)` (n = 1, 2, …) under the policy in effect ({@link Policy}): timeouts per attempt,
 * and a new attempt after a retryable failure of an attempt that emitted nothing.
 *
 * @since 0.1.0
 * @category combinators
 */
export const retrying = <A>(
  attempt: (n: number) => Stream.Stream<A, LlmError>,
  options: { readonly provider?: string } = {}
): Stream.Stream<A, LlmError> =>
  Stream.unwrap(Effect.gen(function*() {
    const current = yield* Policy
    const started = yield* Clock.currentTimeMillis
    const run = (n: number): Stream.Stream<A, LlmError> =>
      Stream.unwrap(Effect.map(Ref.make(false), (emitted) =>
        withTimeouts(Stream.suspend(() => attempt(n)), current, emitted, options.provider).pipe(
          Stream.catchAll((error) =>
            Stream.unwrap(Effect.gen(function*() {
              const now = yield* Clock.currentTimeMillis
              const decision = decide({
                policy: current,
                error,
                attempt: n,
                emitted: yield* Ref.get(emitted),
                elapsedMillis: now - started,
                random: current.jitter === 0 ? 0 : yield* Random.next
              })
              if (decision._tag === "Fail") return Stream.fail(error)
              yield* Effect.logWarning("model request failed before its first chunk; retrying").pipe(
                Effect.annotateLogs({
                  code: error.code,
                  message: error.message,
                  attempt: n,
                  nextAttempt: n + 1,
                  delayMillis: Duration.toMillis(decision.delay),
                  ...(options.provider === undefined ? {} : { provider: options.provider })
                })
              )
              const notify = yield* Notices
              yield* notify({
                ...(options.provider === undefined ? {} : { provider: options.provider }),
                attempt: n,
                delayMs: Duration.toMillis(decision.delay),
                code: error.code,
                message: error.message
              })
              yield* Effect.sleep(decision.delay)
              return run(n + 1)
            }))
          )
        )))
    return run(1)
  }))
