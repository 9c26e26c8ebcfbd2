/**
 * The HTTP edge, Effect 4 port of `src/Adapter/HttpEdge.ts` (spike, issue 27): the streaming POST
 * (`stream`), its byte-level timers and the drain after the terminal event, with the error mapping
 * rewritten for Effect 4's `HttpClientError` (a wrapper with a `reason`). Cut for the spike: the
 * user-agent identity (a fixed string), `fromNonStreamBody` details (a generic MALFORMED_RESPONSE).
 */
import * as Headers from "effect/http/Headers"
import * as HttpClient from "effect/http/HttpClient"
import type * as HttpClientError from "effect/http/HttpClientError"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import type * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Pull from "effect/Pull"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as LlmError from "../Llm/LlmError.js"

/** The retry policy's byte timers (v3: `Retry.Policy` in the context; the defaults here). */
export const defaultTimers: Timers = { firstByte: Duration.minutes(10), idle: Duration.minutes(5) }

export const userAgent = "effect-harness/0.1.0 (+https://github.com/effect-harness/effect-harness)"

export const mergeHeaders = (
  sets: ReadonlyArray<Readonly<Record<string, string>> | undefined>,
  attribution: string = userAgent
): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const set of sets) {
    if (set === undefined) continue
    for (const key of Object.keys(set)) out[key.toLowerCase()] = set[key] as string
  }
  out["user-agent"] = attribution
  return out
}

/**
 * Joins a base URL and a path with exactly one `/` between them.
 *
 * @since 0.1.0
 * @category utils
 */
export const joinUrl = (base: string, path: string): string =>
  `${base.replace(/\/+$/, "")}/${path.replace(/^\/+/, "")}`

/**
 * How the API key is sent.
 *
 * @since 0.1.0
 * @category models
 */
export type Auth =
  | { readonly scheme: "bearer"; readonly key: Redacted.Redacted<string> }
  | { readonly scheme: "header"; readonly header: string; readonly key: Redacted.Redacted<string> }

/**
 * One streaming POST.
 *
 * @since 0.1.0
 * @category models
 */
export interface StreamRequest {
  /** provider route, put on errors */
  readonly provider: string
  readonly url: string
  /** non-secret headers (already merged, see {@link mergeHeaders}) */
  readonly headers: Readonly<Record<string, string>>
  /** the API key, if any; unwrapped only here */
  readonly auth?: Auth | undefined
  /** the JSON body */
  readonly body: unknown
  /** header names whose values are secrets (default {@link defaultSecretHeaders}) */
  readonly secretHeaders?: ReadonlyArray<string> | undefined
}

/**
 * `true` when a key is the empty string (an explicitly empty key is invalid configuration).
 *
 * @since 0.1.0
 * @category utils
 */
export const isEmptySecret = (key: Redacted.Redacted<string>): boolean => Redacted.value(key).trim() === ""

const redactedText = "<redacted>"

/**
 * Replaces every occurrence of the secrets' values in a text by `<redacted>`.
 *
 * @since 0.1.0
 * @category utils
 */
export const scrub = (text: string, secrets: ReadonlyArray<string>): string => {
  let out = text
  for (const secret of secrets) if (secret.length > 0) out = out.split(secret).join(redactedText)
  return out
}

const causeMessage = (cause: unknown): string => {
  if (cause instanceof Error) {
    const inner: unknown = (cause as { cause?: unknown }).cause
    const innerMessage = inner instanceof Error && inner.message !== cause.message ? `: ${inner.message}` : ""
    return `${cause.message}${innerMessage}`
  }
  return typeof cause === "string" ? cause : "unknown cause"
}

/** undici's `ClientDestroyedError` (a client whose dispatcher was destroyed, e.g. its layer's scope closed) */
const isDestroyedClient = (cause: unknown): boolean =>
  typeof cause === "object" && cause !== null && (cause as { code?: unknown }).code === "UND_ERR_DESTROYED"

// v4: `HttpClientError` is one class whose `reason` carries the kind (`InvalidUrlError`, `EncodeError`,
// `TransportError`, ...); v3 had `RequestError`/`ResponseError` with a string `reason`
const requestFailure = (
  error: HttpClientError.HttpClientError,
  options: StreamRequest,
  secrets: ReadonlyArray<string>
): LlmError.ProviderError => {
  const where = `POST ${options.url}`
  const reason = error.reason
  if (reason._tag === "InvalidUrlError") {
    return LlmError.providerError("INVALID_REQUEST", scrub(`invalid URL (${where})`, secrets), {
      provider: options.provider
    })
  }
  if (reason._tag === "EncodeError") {
    return LlmError.providerError(
      "INVALID_REQUEST",
      scrub(`request body could not be encoded (${where})`, secrets),
      { provider: options.provider }
    )
  }
  const cause: unknown = (reason as { readonly cause?: unknown }).cause
  if (isDestroyedClient(cause)) {
    return LlmError.providerError(
      "TRANSPORT",
      scrub(`the HTTP client was closed before this request (${where})`, secrets),
      { provider: options.provider, cause }
    )
  }
  return LlmError.providerError(
    "TRANSPORT",
    scrub(`transport error: ${causeMessage(cause)} (${where})`, secrets),
    cause === undefined ? { provider: options.provider } : { provider: options.provider, cause }
  )
}

const retryAfter = (response: HttpClientResponse.HttpClientResponse, now: number): number | undefined => {
  const ms = response.headers["retry-after-ms"]
  const fromMs = LlmError.parseRetryAfter(ms, now, "ms")
  if (fromMs !== undefined) return fromMs
  return LlmError.parseRetryAfter(response.headers["retry-after"], now, "s")
}

/**
 * The byte-level timers of one request.
 *
 * @since 0.1.0
 * @category models
 */
export interface Timers {
  /** from the start of the request to the first body byte */
  readonly firstByte: Duration.Duration
  /** between two reads of body bytes */
  readonly idle: Duration.Duration
}

const timeoutError = (first: boolean, limit: Duration.Duration, provider: string): LlmError.ProviderError =>
  LlmError.providerError(
    "TIMEOUT",
    first
      ? `no response body from the model within ${Duration.format(limit)} (first-byte timeout)`
      : `model stream sent nothing for ${Duration.format(limit)} (idle timeout)`,
    { provider }
  )

type BytesPull<E> = Pull.Pull<Arr.NonEmptyReadonlyArray<Uint8Array>, E, void>

/**
 * Applies byte-level timers to a byte stream (see the v3 module): the first pull and every later pull
 * until a non-empty read are bounded by the first-byte limit, then each wait for the next non-empty
 * read by the idle limit. A deadline is kept, so empty reads never reset it.
 */
export const withByteTimers = <E>(
  bytes: Stream.Stream<Uint8Array, E>,
  timers: Timers,
  provider: string
): Stream.Stream<Uint8Array, E | LlmError.ProviderError> => {
  const firstFinite = Duration.isFinite(timers.firstByte)
  const idleFinite = Duration.isFinite(timers.idle)
  if (!firstFinite && !idleFinite) return bytes
  return Stream.transformPull(bytes, (pull: BytesPull<E>) =>
    Effect.map(Clock.currentTimeMillis, (start) => {
      let sawByte = false
      let since = start
      const onRead = (chunk: Arr.NonEmptyReadonlyArray<Uint8Array>) =>
        Effect.clockWith((clock) => {
          if (chunk.some((b) => b.length > 0)) {
            sawByte = true
            since = clock.currentTimeMillisUnsafe()
          }
          return Effect.succeed(chunk)
        })
      const timed: BytesPull<E | LlmError.ProviderError> = Effect.suspend(() => {
        const limit = sawByte ? timers.idle : timers.firstByte
        if (!Duration.isFinite(limit)) return Effect.flatMap(pull, onRead)
        return Effect.clockWith((clock) => {
          const left = Math.max(0, Duration.toMillis(limit) - (clock.currentTimeMillisUnsafe() - since))
          return Effect.flatMap(
            Effect.timeoutOrElse(pull, {
              duration: Duration.millis(left),
              orElse: () => Effect.fail(timeoutError(!sawByte, limit, provider))
            }),
            onRead
          )
        })
      })
      return timed
    }))
}


/**
 * Sends one streaming POST and returns the response body bytes, consumed inside the request's
 * scope, under the byte-level timers. Non-2xx → the E-2 code, empty 2xx body → `EMPTY_RESPONSE`,
 * socket errors → `TRANSPORT`, a timer → `TIMEOUT`. Interrupting or ending the stream aborts the request.
 */
export const stream = (
  client: HttpClient.HttpClient,
  options: StreamRequest,
  timers: Timers = defaultTimers
): Stream.Stream<Uint8Array, LlmError.ProviderError> =>
  withByteTimers(untimed(client, options), timers, options.provider)

const untimed = (
  client: HttpClient.HttpClient,
  options: StreamRequest
): Stream.Stream<Uint8Array, LlmError.ProviderError> =>
  Stream.unwrap(
    Effect.gen(function*() {
      const auth = options.auth
      const key = auth === undefined ? undefined : Redacted.value(auth.key)
      const headers: Record<string, string> = { ...options.headers }
      if (auth !== undefined && key !== undefined) {
        if (auth.scheme === "bearer") headers["authorization"] = `Bearer ${key}`
        else headers[auth.header.toLowerCase()] = key
      }
      const secretNames = [
        ...(options.secretHeaders ?? defaultSecretHeaders),
        ...(auth?.scheme === "header" ? [auth.header] : auth?.scheme === "bearer" ? ["authorization"] : [])
      ].map((name) => name.toLowerCase())
      const secrets = secretValues(headers, secretNames, key)
      const request = yield* HttpClientRequest.post(options.url).pipe(
        HttpClientRequest.setHeaders(headers),
        HttpClientRequest.bodyJson(options.body),
        Effect.mapError((error) =>
          LlmError.providerError(
            "INVALID_REQUEST",
            scrub(`request body is not JSON-serializable: ${causeMessage(error)}`, secrets),
            { provider: options.provider }
          )
        )
      )
      // v4: the redacted header names are a Context.Reference (v3: a FiberRef set with locallyWith)
      const response = yield* HttpClient.withScope(client).execute(request).pipe(
        Effect.mapError((error) => requestFailure(error, options, secrets)),
        Effect.updateService(Headers.CurrentRedactedNames, (names) => [...names, ...secretNames])
      )
      if (response.status < 200 || response.status >= 300) {
        const now = yield* Clock.currentTimeMillis
        const body = yield* readBounded(response, errorBodyCap)
        return yield* Effect.fail(LlmError.fromHttpResponse({
          status: response.status,
          body: scrub(body, secrets),
          provider: options.provider,
          retryAfterMillis: retryAfter(response, now)
        }))
      }
      const kind = bodyKind(response.headers["content-type"])
      if (kind !== "stream") {
        return yield* Effect.fail(LlmError.providerError(
          "MALFORMED_RESPONSE",
          `expected an event stream (HTTP ${response.status})`,
          { provider: options.provider, status: response.status }
        ))
      }
      let sawBytes = false
      const body = response.stream.pipe(
        Stream.mapArray((chunk) => {
          if (!sawBytes) sawBytes = chunk.some((bytes) => bytes.length > 0)
          return chunk
        }),
        Stream.mapError((error) => requestFailure(error, options, secrets)),
        Stream.concat(
          Stream.suspend(() =>
            sawBytes ? Stream.empty : Stream.fail(
              LlmError.providerError("EMPTY_RESPONSE", `empty response body (HTTP ${response.status})`, {
                provider: options.provider,
                status: response.status
              })
            )
          )
        )
      )
      // pulled here (not piped) so that, when the consumer stops early but normally (the decoder
      // saw the terminal marker), the rest of the body can still be read before the request's
      // scope closes: this finalizer runs before the body's and the request's own (added earlier)
      let ended = false
      const pull = yield* Stream.toPull(body)
      yield* Effect.addFinalizer((exit) =>
        !Exit.isSuccess(exit)
          ? Effect.void
          : Effect.andThen(
            ended ? Effect.void : drainRest(pull, () => void (ended = true)),
            // undici puts a finished socket back in its pool one macrotask after the body's end:
            // a request sent before that would open a second connection
            Effect.suspend(() => ended ? nextMacrotask : Effect.void)
          )
      )
      const markEnd = Effect.sync(() => void (ended = true))
      return Stream.fromPull(Effect.succeed(Effect.tapCause(pull, () => markEnd)))
    })
  )

export const drainLimit = { bytes: 16 * 1024, millis: 200 } as const

const drainRest = <E>(
  pull: Pull.Pull<Arr.NonEmptyReadonlyArray<Uint8Array>, E, void>,
  onEnd: () => void
): Effect.Effect<void> => {
  let budget = drainLimit.bytes
  const loop: Effect.Effect<void, E | Cause.Done<void>> = Effect.flatMap(pull, (chunk) => {
    for (const bytes of chunk) budget -= bytes.length
    return budget > 0 ? loop : Effect.void
  })
  return Effect.interruptible(Effect.ignore(Effect.timeout(
    Effect.tapCause(loop, (cause) => Effect.sync(() => Pull.isDoneCause(cause) && onEnd())),
    Duration.millis(drainLimit.millis)
  )))
}

const nextMacrotask: Effect.Effect<void> = Effect.callback<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

export const defaultSecretHeaders: ReadonlyArray<string> = ["authorization", "api-key", "x-api-key", "x-goog-api-key"]

const secretValues = (
  headers: Readonly<Record<string, string>>,
  names: ReadonlyArray<string>,
  key: string | undefined
): ReadonlyArray<string> => {
  const out: Array<string> = key === undefined ? [] : [key]
  for (const name of names) {
    const value = headers[name]
    if (value === undefined || value.trim() === "") continue
    out.push(value)
    // `Bearer <token>`: the token alone is a secret too
    const token = /^\S+\s+(\S{4,})$/.exec(value.trim())?.[1]
    if (token !== undefined) out.push(token)
  }
  // longest first, so a value containing another is replaced whole
  return [...new Set(out)].sort((a, b) => b.length - a.length)
}

/**
 * The most of an error (or non-stream) body that is read: 1 MiB. A longer body is cut there, the
 * connection released, and {@link truncationMarker} appended.
 *
 * @since 0.1.0
 * @category constants
 */
export const errorBodyCap = 1024 * 1024

/**
 * Appended to a body cut at {@link errorBodyCap}.
 *
 * @since 0.1.0
 * @category constants
 */
export const truncationMarker = "…[truncated at 1 MiB]"

/**
 * Reads at most `cap` bytes of a response body as UTF-8 text (with {@link truncationMarker} when
 * cut); a body that cannot be read gives what was read so far (the status still classifies it).
 *
 * @since 0.1.0
 * @category utils
 */
export const readBounded = (
  response: HttpClientResponse.HttpClientResponse,
  cap: number
): Effect.Effect<string> =>
  Effect.suspend(() => {
    const decoder = new TextDecoder("utf-8")
    let text = ""
    let size = 0
    let truncated = false
    return response.stream.pipe(
      Stream.takeWhile(() => size < cap),
      Stream.runForEach((bytes) =>
        Effect.sync(() => {
          const room = cap - size
          const part = bytes.length > room ? bytes.subarray(0, room) : bytes
          if (bytes.length > room) truncated = true
          size += part.length
          text += decoder.decode(part, { stream: true })
        })
      ),
      Effect.ignore,
      Effect.map(() => {
        text += decoder.decode()
        if (size >= cap) truncated = true
        return truncated ? text + truncationMarker : text
      })
    )
  })

type BodyKind = "stream" | "json" | "html"

/** `json` / `html` for a 2xx whose content type says it is not an event stream; else `stream`. */
const bodyKind = (contentType: string | undefined): BodyKind => {
  const type = (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? ""
  if (type === "application/json" || type.endsWith("+json")) return "json"
  if (type === "text/html" || type === "application/xhtml+xml") return "html"
  return "stream"
}

