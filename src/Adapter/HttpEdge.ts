/**
 * The HTTP edge shared by the provider adapters: attribution (DEC-8, C-6), header merging, request
 * building, status mapping (E-2, E-3, P-9) and the scoped response body.
 *
 * - Every request carries `user-agent: effect-harness/<version> (+<homepage>)`; name, version and
 *   homepage are read from `package.json` through a JSON import (never hand-copied). The import
 *   resolves from `src/` (tsx, vitest), from `dist/` (tsc keeps the relative path) and is inlined by
 *   esbuild in the CLI bundle. A deployment may substitute the identity (`userAgent` option) but
 *   never suppress it; extra deployment headers are merged with the attribution winning
 *   case-insensitively. No provider-specific attribution headers are ever added.
 * - API keys are `Redacted` and unwrapped only in {@link stream}; every error message this module
 *   builds (including a provider's echoed error text) has the key's value, and the value of every
 *   configured secret header ({@link defaultSecretHeaders}: `authorization`, `api-key`,
 *   `x-api-key`, `x-goog-api-key`; deployments add their own), replaced by `<redacted>`; the same
 *   names are redacted in the HTTP client's span attributes (`Headers.CurrentRedactedNames`), and no
 *   error carries the request object (its headers hold the key).
 * - Error bodies (non-2xx) and non-stream 2xx bodies are read up to {@link errorBodyCap} (1 MiB)
 *   with a truncation marker, so a huge error page cannot balloon memory.
 * - A 2xx whose content type is JSON or HTML is not an event stream: it is classified by
 *   {@link fromNonStreamBody} (provider message kept, canonical code, retried only when retryable)
 *   instead of becoming `STREAM_CLOSED`.
 * - The body is JSON via `HttpClientRequest.bodyJson` (a value that cannot be serialized is a
 *   typed `INVALID_REQUEST`, never a throw).
 * - Exactly one HTTP attempt per call: retries belong to the `Llm` service (DEC-3). Failures are
 *   classified: non-2xx by `LlmError.fromHttpResponse` with `retryAfterMillis` from
 *   `retry-after-ms` (milliseconds, preferred when present) or `retry-after` (seconds or HTTP
 *   date); a 2xx with an empty body is `EMPTY_RESPONSE`; socket errors (connect, reset, a body cut
 *   mid-read) are `TRANSPORT`; an invalid URL is `INVALID_REQUEST`.
 * - Timers are byte-level and live here (DEC-3, issue 11), read from `Retry.Policy`: the
 *   **first-byte timeout** runs from the start of the request until the first byte of the response
 *   *body* (headers alone do not count; an SSE comment, an Anthropic `ping` or a role-only delta
 *   does), the **idle timeout** between two reads of body bytes of any kind. Both fail with
 *   `TIMEOUT`; whether that is retried is the `Llm` retry policy's call (retryable while the attempt
 *   emitted no chunk; after chunks it goes to request recovery, L-20).
 * - The response body is consumed inside the request's scope (`Stream.unwrap` +
 *   `HttpClient.withScope`): when the consumer is interrupted, the request is aborted and the
 *   connection closed. When the consumer stops normally before the body's end (the decoder saw the
 *   terminal marker), the rest of the body is drained first, bounded by {@link drainLimit}, so the
 *   keep-alive socket goes back to the pool (issue 20).
 * - No client provided to an adapter: it uses `DefaultHttpClient` (undici, process lifetime). A
 *   request on a client whose dispatcher was already destroyed (a layer provided only while the
 *   adapter was constructed) fails with a `TRANSPORT` error that says so.
 *
 * @since 0.1.0
 */
import * as Headers from "effect/http/Headers"
import * as HttpClient from "effect/http/HttpClient"
import type * as HttpClientError from "effect/http/HttpClientError"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import type * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Pull from "effect/Pull"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as LlmError from "../Llm/LlmError.js"
import * as Retry from "../Llm/Retry.js"
import packageJson from "../../package.json" with { type: "json" }

// ---------------------------------------------------------------------------------------------
// Attribution

/**
 * The static public identity of this product (C-6): no secrets, paths, session or user data.
 *
 * @since 0.1.0
 * @category models
 */
export interface Identity {
  readonly product: string
  readonly version: string
  readonly homepage: string
}

/**
 * This package's identity, read from `package.json`.
 *
 * @since 0.1.0
 * @category constants
 */
export const identity: Identity = {
  product: packageJson.name,
  version: packageJson.version,
  homepage: packageJson.homepage
}

/**
 * Formats an identity as a `user-agent` value: `<product>/<version> (+<homepage>)`.
 *
 * @since 0.1.0
 * @category utils
 */
export const formatUserAgent = (id: Identity): string => `${id.product}/${id.version} (+${id.homepage})`

/**
 * The attribution `user-agent` every provider request carries (DEC-8).
 *
 * @since 0.1.0
 * @category constants
 */
export const userAgent: string = formatUserAgent(identity)

/**
 * Merges header sets into one lower-cased record: later sets override earlier ones, then the
 * attribution `user-agent` is set last, so it wins over any casing of `User-Agent` (C-6).
 *
 * @since 0.1.0
 * @category utils
 */
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

// ---------------------------------------------------------------------------------------------
// Requests

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
 * An adapter's configuration is invalid (C-9): a `ConfigError` over a `SourceError` whose message
 * is `message` as is (the CLI prints it in the user's words). Effect 4 has no `InvalidData`; the
 * offending key is named by the message.
 *
 * @since 0.1.0
 * @category errors
 */
export const invalidConfig = (message: string): Config.ConfigError =>
  new Config.ConfigError(new ConfigProvider.SourceError({ message }))

/**
 * A required configuration value is absent (C-9): a `ConfigError` whose message names the
 * variable (`path`) to set (Effect 4 has no `MissingData`).
 *
 * @since 0.1.0
 * @category errors
 */
export const missingConfig = (path: string, message: string): Config.ConfigError =>
  invalidConfig(`${message} (${path})`)

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

const requestFailure = (
  error: HttpClientError.HttpClientError,
  options: StreamRequest,
  secrets: ReadonlyArray<string>
): LlmError.ProviderError => {
  const where = `POST ${options.url}`
  // Effect 4: one `HttpClientError` class whose `reason` carries the kind (`InvalidUrlError`,
  // `EncodeError`, `TransportError`, and on a body read `DecodeError`/`EmptyBodyError`/...)
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
  const cause = reason.cause
  if (isDestroyedClient(cause)) {
    return LlmError.providerError(
      "TRANSPORT",
      scrub(
        `the HTTP client was closed before this request (${where}); provide it for the adapter's whole life (Layer.provide on the adapter's layer) or provide none (the adapter then uses its own)`,
        secrets
      ),
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

type BytesPull<E> = Pull.Pull<Arr.NonEmptyReadonlyArray<Uint8Array>, E, void>

const timeoutError = (first: boolean, limit: Duration.Duration, provider: string): LlmError.ProviderError =>
  LlmError.providerError(
    "TIMEOUT",
    first
      ? `no response body from the model within ${Duration.format(limit)} (first-byte timeout)`
      : `model stream sent nothing for ${Duration.format(limit)} (idle timeout)`,
    { provider }
  )

/**
 * Applies byte-level timers to a byte stream: the first pull (which sends the request and waits for
 * the headers) and every later pull until a non-empty read are bounded by the first-byte limit,
 * then each wait for the next non-empty read by the idle limit. A deadline is kept, so empty reads
 * never reset it. `Duration.infinity` disables a timer.
 *
 * @since 0.1.0
 * @category combinators
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
 * scope, under the byte-level timers of the `Retry.Policy` in effect. Non-2xx → the E-2 code (with
 * `retryAfterMillis`), empty 2xx body → `EMPTY_RESPONSE`, socket errors → `TRANSPORT`, a timer →
 * `TIMEOUT`. Interrupting or ending the stream aborts the request.
 *
 * @since 0.1.0
 * @category constructors
 */
export const stream = (
  client: HttpClient.HttpClient,
  options: StreamRequest
): Stream.Stream<Uint8Array, LlmError.ProviderError> =>
  Stream.unwrap(Effect.map(Retry.Policy, (policy) =>
    withByteTimers(
      untimed(client, options),
      { firstByte: policy.firstByteTimeout, idle: policy.idleTimeout },
      options.provider
    )))

const untimed = (
  client: HttpClient.HttpClient,
  options: StreamRequest
): Stream.Stream<Uint8Array, LlmError.ProviderError> =>
  Stream.unwrap(
    Effect.gen(function*() {
      // the request and its body live in a scope of their own, closed sequentially by the one
      // finalizer below, after the drain: the stream's scope may run its finalizers in parallel,
      // which would abort the request or destroy the body while it is being drained
      const own = yield* Scope.make("sequential")
      let drain: Effect.Effect<void> = Effect.void
      yield* Effect.addFinalizer((exit) =>
        Effect.andThen(Exit.isSuccess(exit) ? Effect.suspend(() => drain) : Effect.void, Scope.close(own, exit))
      )
      const auth = options.auth
      const key = auth === undefined ? undefined : Redacted.value(auth.key)
      const headers: Record<string, string> = { ...options.headers }
      if (auth !== undefined && key !== undefined) {
        if (auth.scheme === "bearer") headers["authorization"] = `Bearer ${key}`
        else headers[auth.header.toLowerCase()] = key
      }
      // the header carrying the key is secret whatever the configured list says
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
            scrub(`request body is not JSON-serializable: ${causeMessage(error.cause)}`, secrets),
            { provider: options.provider }
          )
        )
      )
      const response = yield* HttpClient.withScope(client).execute(request).pipe(
        Effect.mapError((error) => requestFailure(error, options, secrets)),
        // span attributes and inspected headers redact every configured secret header (a
        // `Context.Reference` in Effect 4, set for the request only)
        Effect.updateService(Headers.CurrentRedactedNames, (names) => [...names, ...secretNames]),
        Scope.provide(own)
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
        const body = yield* readBounded(response, errorBodyCap)
        return yield* Effect.fail(fromNonStreamBody({
          status: response.status,
          kind,
          body: scrub(body, secrets),
          provider: options.provider
        }))
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
      // scope closes (the finalizer above drains, then closes it)
      let ended = false
      const pull = yield* Stream.toPull(body).pipe(Scope.provide(own))
      drain = Effect.andThen(
        Effect.suspend(() => ended ? Effect.void : drainRest(pull, () => void (ended = true))),
        // undici puts a finished socket back in its pool one macrotask after the body's end:
        // a request sent before that would open a second connection
        Effect.suspend(() => ended ? nextMacrotask : Effect.void)
      )
      // any end of the pull (done, failure) means there is nothing left to drain
      const markEnd = Effect.sync(() => void (ended = true))
      return Stream.fromPull(Effect.succeed(Effect.tapCause(pull, () => markEnd)))
    })
  )

/**
 * After the terminal event the rest of a response body (usually only the end of the chunked
 * encoding, sometimes arriving in a later read) is read and discarded, at most
 * {@link drainLimit} bytes for at most {@link drainLimit} `millis`, so that the keep-alive socket
 * goes back to the pool instead of being closed (issue 20). Past either bound the body is
 * released unread and the connection closed, as before. Interruption never drains.
 *
 * @since 0.1.0
 * @category constants
 */
export const drainLimit = { bytes: 16 * 1024, millis: 200 } as const

const drainRest = <E>(
  pull: BytesPull<E>,
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

// ---------------------------------------------------------------------------------------------
// Secrets, bounded bodies, non-stream answers

/**
 * Header names whose values are secrets by default: never in error messages, logs or span
 * attributes. Adapters accept their own list (`secretHeaders`).
 *
 * @since 0.1.0
 * @category constants
 */
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

const oneLine = (text: string, max = 300): string => {
  const line = text.replace(/\s+/g, " ").trim()
  return line.length > max ? `${line.slice(0, max)}…` : line
}

const htmlText = (html: string): string => {
  const title = /<title[^>]*>([^]*?)<\/title>/i.exec(html)?.[1]
  const h1 = /<h1[^>]*>([^]*?)<\/h1>/i.exec(html)?.[1]
  const strip = (s: string) => s.replace(/<[^>]*>/g, " ").replace(/&nbsp;/g, " ").replace(/&amp;/g, "&")
  return oneLine(strip(title ?? h1 ?? html.replace(/<(script|style)[^>]*>[^]*?<\/\1>/gi, " ")))
}

/**
 * Classifies a 2xx answer that is not an event stream (issue 11): a JSON body with an `error`
 * object is classified like an in-band error (`LlmError.classifyProviderError`, the provider's
 * message kept), a JSON body without one is `MALFORMED_RESPONSE` (e.g. a gateway that ignored
 * `stream: true`); an HTML page (a proxy's error page) names its title and is classified by a status
 * number in it (`502 Bad Gateway` → `SERVER`), else `MALFORMED_RESPONSE`. Every message is one line.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromNonStreamBody = (options: {
  readonly status: number
  readonly kind: "json" | "html"
  readonly body: string
  readonly provider: string
}): LlmError.ProviderError => {
  const base = { provider: options.provider, status: options.status }
  if (options.kind === "json") {
    const detail = LlmError.parseErrorBody(options.body)
    if (detail !== undefined) {
      const message = oneLine(detail.message ?? `provider error in a JSON body (HTTP ${options.status})`)
      const providerCode = detail.code ?? detail.type
      return LlmError.providerError(
        LlmError.classifyProviderError({ code: detail.code, type: detail.type, message: detail.message }),
        message,
        providerCode === undefined ? base : { ...base, providerCode }
      )
    }
    return LlmError.providerError(
      "MALFORMED_RESPONSE",
      `expected an event stream, got a JSON body (HTTP ${options.status}): ${oneLine(options.body, 120)}`,
      base
    )
  }
  const text = htmlText(options.body)
  const status = /\b([45]\d\d)\b/.exec(text)?.[1]
  const code = status === undefined ? "MALFORMED_RESPONSE" : LlmError.codeForStatus(Number(status), { message: text })
  return LlmError.providerError(
    code,
    `expected an event stream, got an HTML page (HTTP ${options.status}): ${text === "" ? "(empty page)" : text}`,
    base
  )
}
