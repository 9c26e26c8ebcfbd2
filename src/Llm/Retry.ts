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
 * - each attempt has a **first-byte timeout** and an **idle timeout**, both failing with a
 *   `ProviderError` of code `TIMEOUT`. They are measured on **bytes**, inside the HTTP edge
 *   (`Adapter/HttpEdge`), which reads them from this policy: first byte = the first byte of the
 *   response *body* (headers alone do not count; an SSE comment, a `ping` or a role-only delta
 *   does), idle = the time between two reads of any bytes. Chunks are not timed here: a provider
 *   that keeps a queued or reasoning request alive with comments is healthy (issue 11). Adapters
 *   without HTTP (the scripted one) have no timers.
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
 * - A first-byte timeout is retryable (nothing was emitted); an idle timeout after a chunk is not
 *   (it goes to request recovery, L-20). An idle timeout after keep-alive bytes only (no chunk
 *   emitted yet) is retryable like any failure before the first chunk.
 * - Defaults are sized for reasoning models (decision note 0006): a 10 min first-byte timeout (what
 *   the official OpenAI and Anthropic SDKs allow a request), a 5 min idle timeout (long thinking
 *   with ping-only gaps keeps bytes flowing; a silent 5 min gap mid-body is a dead connection), and
 *   a 25 min retry deadline so that a first-byte timeout can still be retried.
 * - Every retry is logged at warning level with the code, attempt and delay; nothing is swallowed.
 *   Its backoff runs in an `effect_harness.retry` span (a child of the request's `chat` span, issue 19).
 *
 * Configure with a Layer or per stream:
 *
 * ```ts
 * program.pipe(Effect.provide(Retry.layer({ maxAttempts: 2, firstByteTimeout: "10 seconds" })))
 * Llm.stream(request).pipe(Stream.provideServiceEffect(Retry.Policy, Effect.fromResult(Retry.policy({ maxAttempts: 1 }))))
 * ```
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as GenAi from "./GenAi.js"
import { isRetryable, type LlmError } from "./LlmError.js"

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
  /** time allowed until the first byte of the response body (default 10 min; `Duration.infinity` disables) */
  readonly firstByteTimeout: Duration.Duration
  /** time allowed between two reads of body bytes (default 5 min; `Duration.infinity` disables) */
  readonly idleTimeout: Duration.Duration
  /** no retry starts after this much time since the first attempt began (default 25 min) */
  readonly maxElapsed: Duration.Duration
}

/**
 * Overrides for {@link policy}; durations accept any `Duration.Input` (`"2 seconds"`, millis, …).
 *
 * @since 0.1.0
 * @category models
 */
export interface RetryPolicyInput {
  readonly maxAttempts?: number
  readonly baseDelay?: Duration.Input
  readonly maxDelay?: Duration.Input
  readonly retryAfterCap?: Duration.Input
  readonly jitter?: number
  readonly firstByteTimeout?: Duration.Input
  readonly idleTimeout?: Duration.Input
  readonly maxElapsed?: Duration.Input
}

/**
 * The default policy: 4 attempts, 500 ms base, 30 s max backoff, 60 s Retry-After cap, 25 %
 * jitter, 10 min first-byte timeout, 5 min idle timeout, 25 min retry deadline.
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
  firstByteTimeout: Duration.minutes(10),
  idleTimeout: Duration.minutes(5),
  maxElapsed: Duration.minutes(25)
}

/**
 * A retry policy that cannot be built: `maxAttempts` not a positive integer, `jitter` outside
 * [0, 1], or a negative duration.
 *
 * @since 0.1.0
 * @category errors
 */
export class RetryPolicyError extends Schema.TaggedError<RetryPolicyError>()("RetryPolicyError", {
  code: Schema.Literal("INVALID_RETRY_POLICY"),
  message: Schema.String
}) {}

/**
 * Builds a policy from the defaults and overrides; an invalid knob is a typed
 * {@link RetryPolicyError} (a `Result`; `Effect.fromResult` lifts it), never a throw.
 *
 * @since 0.1.0
 * @category constructors
 */
export const policy = (overrides: RetryPolicyInput = {}): Result.Result<RetryPolicy, RetryPolicyError> => {
  const maxAttempts = overrides.maxAttempts ?? defaultPolicy.maxAttempts
  const jitter = overrides.jitter ?? defaultPolicy.jitter
  const invalid = (message: string) =>
    Result.fail(new RetryPolicyError({ code: "INVALID_RETRY_POLICY", message: `invalid retry policy: ${message}` }))
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) {
    return invalid(`maxAttempts must be a positive integer, got ${maxAttempts}`)
  }
  if (!(jitter >= 0 && jitter <= 1)) return invalid(`jitter must be within [0, 1], got ${jitter}`)
  const durations: Record<string, Duration.Duration> = {}
  for (const name of ["baseDelay", "maxDelay", "retryAfterCap", "firstByteTimeout", "idleTimeout", "maxElapsed"] as const) {
    const value = overrides[name]
    if (value === undefined) {
      durations[name] = defaultPolicy[name]
      continue
    }
    const decoded = Duration.fromInput(value)
    if (Option.isNone(decoded) || Duration.toMillis(decoded.value) < 0) return invalid(`${name} is not a duration`)
    durations[name] = decoded.value
  }
  const d = (name: string) => durations[name] as Duration.Duration
  return Result.succeed({
    maxAttempts,
    jitter,
    baseDelay: d("baseDelay"),
    maxDelay: d("maxDelay"),
    retryAfterCap: d("retryAfterCap"),
    firstByteTimeout: d("firstByteTimeout"),
    idleTimeout: d("idleTimeout"),
    maxElapsed: d("maxElapsed")
  })
}

/**
 * The policy in effect; defaults to {@link defaultPolicy} when nothing is provided.
 *
 * @since 0.1.0
 * @category tags
 */
export const Policy: Context.Reference<RetryPolicy> = Context.Reference<RetryPolicy>(
  "effect-harness/Llm/Retry/Policy",
  { defaultValue: () => defaultPolicy }
)

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
export const Notices: Context.Reference<(notice: RetryNotice) => Effect.Effect<void>> = Context.Reference<
  (notice: RetryNotice) => Effect.Effect<void>
>("effect-harness/Llm/Retry/Notices", { defaultValue: () => () => Effect.void })

/**
 * A Layer overriding the policy (unset knobs keep their defaults); fails with
 * {@link RetryPolicyError} on an invalid knob.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (overrides: RetryPolicyInput = {}): Layer.Layer<never, RetryPolicyError> =>
  Layer.effect(Policy, Effect.fromResult(policy(overrides)))

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

/**
 * Runs `attempt(n)` (n = 1, 2, …) under the policy in effect ({@link Policy}): a new attempt after
 * a retryable failure of an attempt that emitted nothing. (Timeouts are byte-level, in the HTTP
 * edge, which reads them from the same policy.)
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
      Stream.suspend(() => {
        // owned by this attempt's run; set once any non-empty chunk reached the consumer
        let emitted = false
        return attempt(n).pipe(
          Stream.mapArray((chunk) => {
            if (!emitted && chunk.length > 0) emitted = true
            return chunk
          }),
          Stream.catch((error) =>
            Stream.unwrap(Effect.gen(function*() {
              const now = yield* Clock.currentTimeMillis
              const decision = decide({
                policy: current,
                error,
                attempt: n,
                emitted,
                elapsedMillis: now - started,
                random: current.jitter === 0 ? 0 : yield* Random.next
              })
              if (decision._tag === "Fail") return Stream.fail(error)
              yield* backoff(n, decision.delay, error, options.provider)
              return run(n + 1)
            }))
          )
        )
      })
    return run(1)
  }))

/** One retry's warning, notice and sleep, in an `effect_harness.retry` span (a child of the request's span). */
const backoff = (n: number, delay: Duration.Duration, error: LlmError, provider: string | undefined) =>
  Effect.gen(function*() {
    yield* Effect.logWarning("model request failed before its first chunk; retrying").pipe(
      Effect.annotateLogs({
        code: error.code,
        message: error.message,
        attempt: n,
        nextAttempt: n + 1,
        delayMillis: Duration.toMillis(delay),
        ...(provider === undefined ? {} : { provider })
      })
    )
    const notify = yield* Notices
    yield* notify({
      ...(provider === undefined ? {} : { provider }),
      attempt: n,
      delayMs: Duration.toMillis(delay),
      code: error.code,
      message: error.message
    })
    yield* Effect.sleep(delay)
  }).pipe(
    Effect.withSpan(GenAi.SpanName.retry, {
      kind: "internal",
      attributes: {
        [GenAi.Attr.retryAttempt]: n,
        [GenAi.Attr.retryDelayMs]: Duration.toMillis(delay),
        [GenAi.Attr.errorType]: error.code,
        ...(provider === undefined ? {} : { [GenAi.Attr.providerName]: provider })
      }
    })
  )
