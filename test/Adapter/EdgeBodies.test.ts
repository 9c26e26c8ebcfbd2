// vitest project: integration
/**
 * The HTTP edge under real-world answers (issue 11 items 5 and 6, issue 10's error-body bound):
 * non-stream 2xx bodies (a JSON error, an HTML page) are classified with the provider's message in
 * one line and retried only when retryable; error bodies are read up to 1 MiB with a marker; every
 * configured secret header is scrubbed from errors and redacted from span attributes.
 */
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Tracer from "effect/Tracer"
import * as Anthropic from "../../src/Adapter/Anthropic.js"
import * as HttpEdge from "../../src/Adapter/HttpEdge.js"
import * as OpenAiCompatible from "../../src/Adapter/OpenAiCompatible.js"
import * as BlockAssembler from "../../src/Llm/BlockAssembler.js"
import * as ContentBlock from "../../src/Llm/ContentBlock.js"
import * as Llm from "../../src/Llm/Llm.js"
import * as Message from "../../src/Llm/Message.js"
import * as Retry from "../../src/Llm/Retry.js"
import * as FakeProvider from "../support/FakeProvider.js"

const text = [
  `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: "fine" }, finish_reason: "stop" }] })}\n\n`,
  "data: [DONE]\n\n"
].join("")

const answer = (status: number, contentType: string, body: string | Uint8Array): FakeProvider.Reply => ({
  _tag: "Http",
  status,
  reason: "",
  headers: { "content-type": contentType },
  body: typeof body === "string" ? new TextEncoder().encode(body) : body
})

const request: Message.GenerateOptions = { provider: "openai-compatible", model: "m", messages: [Message.user("hi")] }

const withLlm = <A, E>(
  replies: ReadonlyArray<FakeProvider.Reply>,
  body: (fake: FakeProvider.FakeProvider) => Effect.Effect<A, E, Llm.Llm | Scope.Scope>,
  extra: Partial<OpenAiCompatible.Options> = {}
) =>
  Effect.gen(function*() {
    const fake = yield* FakeProvider.make({ replies })
    yield* Llm.register(["openai-compatible"], yield* OpenAiCompatible.make({ profile: "generic", baseUrl: fake.url, ...extra }))
    return yield* body(fake)
  }).pipe(
    Effect.provide(Layer.mergeAll(Llm.layer, Retry.layer({ maxAttempts: 3, baseDelay: "1 millis", jitter: 0 }), NodeHttpClient.layerUndici))
  )

describe("non-stream 2xx bodies (issue 11)", () => {
  it.live("[E-2, E-6] a 200 JSON error body: the provider's message in one line, canonical code, sent once when not retryable", () =>
    withLlm([answer(200, "application/json", JSON.stringify({ error: { message: "Invalid value for 'model':\n  not  a model.", type: "invalid_request_error", code: "invalid_value" } }))], (fake) =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(Stream.runDrain(Llm.stream(request)))
        expect(error).toMatchObject({ _tag: "ProviderError", code: "INVALID_REQUEST", status: 200, providerCode: "invalid_value" })
        expect(error.message).toBe("Invalid value for 'model': not a model.")
        expect(yield* fake.requests).toHaveLength(1)
      })))

  it.live("[E-2, E-6] a 200 JSON rate-limit error body is retried like a 429", () =>
    withLlm([answer(200, "application/json; charset=utf-8", JSON.stringify({ error: { code: 429, message: "Rate limit exceeded" } })), FakeProvider.sse(text)], (fake) =>
      Effect.gen(function*() {
        const assembled = yield* Stream.run(Llm.stream(request), BlockAssembler.sink)
        expect(assembled.blocks).toEqual([ContentBlock.text("fine")])
        expect(yield* fake.requests).toHaveLength(2)
      })))

  it.live("[E-2] a 200 JSON body without an error object (a gateway ignoring stream: true) is MALFORMED_RESPONSE, sent once", () =>
    withLlm([answer(200, "application/json", JSON.stringify({ choices: [{ message: { content: "hi" } }] }))], (fake) =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(Stream.runDrain(Llm.stream(request)))
        expect(error).toMatchObject({ code: "MALFORMED_RESPONSE" })
        expect(error.message).toMatch(/^expected an event stream, got a JSON body \(HTTP 200\)/)
        expect(error.message).not.toMatch(/\n/)
        expect(yield* fake.requests).toHaveLength(1)
      })))

  it.live("[E-2] a 200 HTML page (a proxy's login/challenge page): one line naming its title, not retried", () =>
    withLlm(
      [answer(200, "text/html", "<!DOCTYPE html>\n<html><head><title>\n  Just a moment...\n</title><style>body{}</style></head><body><h1>Checking your browser</h1></body></html>")],
      (fake) =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(Stream.runDrain(Llm.stream(request)))
          expect(error).toMatchObject({ code: "MALFORMED_RESPONSE", status: 200 })
          expect(error.message).toBe("expected an event stream, got an HTML page (HTTP 200): Just a moment...")
          expect(yield* fake.requests).toHaveLength(1)
        })
    ))

  it.live("[E-2, E-6] a 200 HTML '502 Bad Gateway' page is SERVER and retried", () =>
    withLlm([answer(200, "text/html", "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"), FakeProvider.sse(text)], (fake) =>
      Effect.gen(function*() {
        const assembled = yield* Stream.run(Llm.stream(request), BlockAssembler.sink)
        expect(assembled.blocks).toEqual([ContentBlock.text("fine")])
        expect(yield* fake.requests).toHaveLength(2)
      })))
})

const anthropicEvent = (type: string, payload: Record<string, unknown> = {}) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...payload })}\n\n`
const anthropicText = [
  anthropicEvent("message_start", { message: { id: "msg_1", type: "message", role: "assistant", content: [], model: "claude", usage: { input_tokens: 3, output_tokens: 1 } } }),
  anthropicEvent("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
  anthropicEvent("content_block_delta", { index: 0, delta: { type: "text_delta", text: "fine" } }),
  anthropicEvent("content_block_stop", { index: 0 }),
  anthropicEvent("message_delta", { delta: { stop_reason: "end_turn" }, usage: { output_tokens: 2 } }),
  anthropicEvent("message_stop")
].join("")

const withAnthropic = <A, E>(
  replies: ReadonlyArray<FakeProvider.Reply>,
  body: (fake: FakeProvider.FakeProvider) => Effect.Effect<A, E, Llm.Llm | Scope.Scope>
) =>
  Effect.gen(function*() {
    const fake = yield* FakeProvider.make({ replies })
    yield* Llm.register(["anthropic"], yield* Anthropic.make({ apiKey: Redacted.make("sk-ant-edge-0001"), baseUrl: fake.url }))
    return yield* body(fake)
  }).pipe(
    Effect.provide(Layer.mergeAll(Llm.layer, Retry.layer({ maxAttempts: 3, baseDelay: "1 millis", jitter: 0 }), NodeHttpClient.layerUndici))
  )

const anthropicRequest: Message.GenerateOptions = { provider: "anthropic", model: "claude", messages: [Message.user("hi")] }

describe("non-stream 2xx bodies through the Anthropic adapter (issue 11: the same edge for every adapter)", () => {
  it.live("[E-2, E-6] a 200 JSON overloaded_error body is SERVER and retried; then the stream answers", () =>
    withAnthropic(
      [answer(200, "application/json", JSON.stringify({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } })), FakeProvider.sse(anthropicText)],
      (fake) =>
        Effect.gen(function*() {
          const assembled = yield* Stream.run(Llm.stream(anthropicRequest), BlockAssembler.sink)
          expect(assembled.blocks).toEqual([ContentBlock.text("fine")])
          expect(yield* fake.requests).toHaveLength(2)
        })
    ))

  it.live("[E-2, E-6] a 200 JSON invalid_request_error body: the provider's message in one line, INVALID_REQUEST, sent once", () =>
    withAnthropic(
      [answer(200, "application/json", JSON.stringify({ type: "error", error: { type: "invalid_request_error", message: "messages: text content blocks\nmust be non-empty" } }))],
      (fake) =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(Stream.runDrain(Llm.stream(anthropicRequest)))
          expect(error).toMatchObject({ _tag: "ProviderError", code: "INVALID_REQUEST", status: 200, provider: "anthropic", providerCode: "invalid_request_error" })
          expect(error.message).toBe("messages: text content blocks must be non-empty")
          expect(yield* fake.requests).toHaveLength(1)
        })
    ))

  it.live("[E-2] a 200 HTML page: one line naming its title, MALFORMED_RESPONSE, sent once", () =>
    withAnthropic(
      [answer(200, "text/html; charset=utf-8", "<html><head><title>Access denied</title></head><body>corporate proxy</body></html>")],
      (fake) =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(Stream.runDrain(Llm.stream(anthropicRequest)))
          expect(error).toMatchObject({ code: "MALFORMED_RESPONSE", status: 200, provider: "anthropic" })
          expect(error.message).toBe("expected an event stream, got an HTML page (HTTP 200): Access denied")
          expect(yield* fake.requests).toHaveLength(1)
        })
    ))
})

describe("bounded error bodies (issue 10 item 7)", () => {
  it.live("an error body is read up to 1 MiB, with the truncation marker; a short one whole", () =>
    Effect.gen(function*() {
      const big = new Uint8Array(3 * 1024 * 1024).fill(0x61)
      const fake = yield* FakeProvider.make({ replies: [answer(500, "text/plain", big), answer(500, "text/plain", "short")] })
      const client = yield* HttpClient.HttpClient
      const read = Effect.scoped(Effect.flatMap(client.execute(HttpClientRequest.get(fake.url)), (r) => HttpEdge.readBounded(r, HttpEdge.errorBodyCap)))
      const long = yield* read
      expect(long.endsWith(HttpEdge.truncationMarker)).toBe(true)
      expect(long.length).toBe(HttpEdge.errorBodyCap + HttpEdge.truncationMarker.length)
      expect(yield* read).toBe("short")
      // through the edge: a huge non-JSON 500 is still SERVER with the generic message
      const huge = yield* FakeProvider.make({ replies: [answer(500, "text/plain", big)] })
      const error = yield* Effect.flip(Stream.runDrain(HttpEdge.stream(client, { provider: "p", url: huge.url, headers: {}, body: {} })))
      expect(error).toMatchObject({ code: "SERVER", message: "API error (HTTP 500)" })
    }).pipe(Effect.provide(NodeHttpClient.layerUndici)))
})

describe("secret headers (issue 11 item 6)", () => {
  const secrets = { "api-key": "azure-secret-111", "x-goog-api-key": "goog-secret-222", "x-custom-token": "custom-secret-333" }

  it.live("every configured secret header's value is scrubbed from error messages (defaults plus a deployment's own)", () =>
    withLlm(
      [FakeProvider.status(401, { body: JSON.stringify({ error: { message: `bad keys ${Object.values(secrets).join(" ")} and Bearer sk-main-444` } }) })],
      () =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(Stream.runDrain(Llm.stream(request)))
          expect(error.code).toBe("AUTH")
          for (const value of [...Object.values(secrets), "sk-main-444"]) expect(error.message).not.toContain(value)
          expect(error.message).toBe("bad keys <redacted> <redacted> <redacted> and <redacted>")
        }),
      {
        apiKey: Redacted.make("sk-main-444"),
        headers: secrets,
        secretHeaders: [...HttpEdge.defaultSecretHeaders, "x-custom-token"]
      }
    ))

  it.live("the HTTP client's span attributes redact every secret header", () =>
    Effect.gen(function*() {
      const attributes: Array<readonly [string, unknown]> = []
      // Effect 4: `span` takes one options record; no `context` hook needed
      const tracer = Tracer.make({
        span: ({ annotations, kind, links, name, parent, sampled, startTime }) => ({
          _tag: "Span",
          name,
          spanId: "s",
          traceId: "t",
          parent,
          annotations,
          status: { _tag: "Started", startTime },
          attributes: new Map(),
          links,
          sampled,
          kind,
          end: () => {},
          attribute: (key, value) => void attributes.push([key, value]),
          event: () => {},
          addLinks: () => {}
        })
      })
      const fake = yield* FakeProvider.make({ replies: [FakeProvider.sse(text)] })
      const client = yield* HttpClient.HttpClient
      yield* Stream.runDrain(HttpEdge.stream(client, {
        provider: "p",
        url: fake.url,
        headers: HttpEdge.mergeHeaders([secrets]),
        auth: { scheme: "bearer", key: Redacted.make("sk-main-444") },
        body: {},
        secretHeaders: [...HttpEdge.defaultSecretHeaders, "x-custom-token"]
      })).pipe(
        Effect.withTracer(tracer),
        // Effect 4 records no header attributes unless a filter lets them through: let them all
        // through, so that the redaction is what keeps the secrets out
        Effect.provideService(HttpClient.TracerHeaderFilter, () => true)
      )
      const headerAttributes = attributes.filter(([k]) => k.startsWith("http.request.header."))
      expect(headerAttributes.map(([k]) => k)).toEqual(expect.arrayContaining([
        "http.request.header.api-key",
        "http.request.header.x-goog-api-key",
        "http.request.header.x-custom-token",
        "http.request.header.authorization"
      ]))
      const dump = JSON.stringify(attributes.map(([k, v]) => [k, String(v)]))
      for (const value of [...Object.values(secrets), "sk-main-444"]) expect(dump).not.toContain(value)
      const [received] = yield* fake.requests
      expect(Option.fromNullishOr(received?.headers["api-key"])).toEqual(Option.some("azure-secret-111"))
    }).pipe(Effect.provide(NodeHttpClient.layerUndici)))
})

