import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import * as LlmError from "../../src/Llm/LlmError.js"
import * as FakeProvider from "../support/FakeProvider.js"

describe("Context-overflow detector (E-4)", () => {
  it("AC-17 [E-4] true for the spec's overflow reports and for real-world phrasings", () => {
    const overflow = [
      // the spec's list
      "context_length_exceeded maximum context length",
      "context-window-overflowed",
      "This model maximum context length is 128000 tokens",
      "input is too long for this model",
      "request too large for model context",
      "input exceeds the model context window limit",
      // realistic provider texts
      "This model's maximum context length is 131072 tokens. However, you requested 141980 tokens (133980 in the messages, 8000 in the completion). Please reduce the length of the messages or completion.",
      "prompt is too long: 208310 tokens > 200000 maximum",
      "Your input exceeds the context window of this model. Please adjust your input and try again.",
      "Input exceeds the model's context length",
      "The prompt is too long for the model's context window",
      "messages exceed the maximum allowed context length",
      "Requested tokens (9000) exceed context window of 8192",
      "the request exceeds the available context size, try increasing it",
      "CONTEXT_LENGTH_EXCEEDED",
      "context window limit exceeded",
      "request is larger than the model's context window",
    ]
    for (const text of overflow) expect(LlmError.isContextOverflow(text), text).toBe(true)
  })

  it("AC-18 [E-4] false for generic limits that are not about the context bound", () => {
    const notOverflow = [
      "invalid request: malformed tool arguments",
      "invalid input: temperature exceeds maximum allowed value",
      "input exceeds maximum allowed value",
      "context window size must be positive",
      "max_tokens: 100000 > 8192, which is the maximum allowed number of output tokens for claude-3-haiku",
      "Rate limit reached for requests",
      "The maximum number of tools is 128",
      "image exceeds 5 MB maximum",
      "Incorrect API key provided",
      "context: missing field `messages`",
      "request exceeds the rate limit for this context",
      "prompt exceeds the maximum length of 1000 characters",
      ""
    ]
    for (const text of notOverflow) expect(LlmError.isContextOverflow(text), text).toBe(false)
  })
})

describe("HTTP status mapping (E-2, E-3)", () => {
  const body = (error: Record<string, unknown>) => JSON.stringify({ error })

  it("AC-19 [E-2,P-9] 401/403→AUTH, 429→RATE_LIMIT, 400→INVALID_REQUEST, 500/503→SERVER, 418→HTTP_418, 413 with overflow code→HTTP_413, 400 with overflow detail→CONTEXT_WINDOW_EXCEEDED; message = body error.message", () => {
    const cases: ReadonlyArray<readonly [number, string, string]> = [
      [401, body({ message: "bad key" }), "AUTH"],
      [403, body({ message: "forbidden" }), "AUTH"],
      [429, body({ message: "slow down" }), "RATE_LIMIT"],
      [400, body({ message: "bad field" }), "INVALID_REQUEST"],
      [500, body({ message: "oops" }), "SERVER"],
      [503, body({ message: "busy" }), "SERVER"],
      [529, body({ message: "Overloaded", type: "overloaded_error" }), "SERVER"],
      [418, body({ message: "teapot" }), "HTTP_418"],
      [404, body({ message: "no such model" }), "UNKNOWN_MODEL"],
      [404, body({ message: "The model `gpt-9` does not exist or you do not have access to it.", code: "model_not_found" }), "UNKNOWN_MODEL"],
      [404, body({ message: "no route for /v2/chat" }), "HTTP_404"],
      [413, body({ message: "too big", code: "context_length_exceeded" }), "HTTP_413"],
      [400, body({ message: "too big", code: "context_length_exceeded" }), "CONTEXT_WINDOW_EXCEEDED"],
      [400, body({ message: "This model's maximum context length is 8192 tokens" }), "CONTEXT_WINDOW_EXCEEDED"],
      [400, body({ message: "x", type: "context-window-overflowed" }), "CONTEXT_WINDOW_EXCEEDED"]
    ]
    for (const [status, text, code] of cases) {
      const error = LlmError.fromHttpResponse({ status, body: text, provider: "p" })
      expect(error).toBeInstanceOf(LlmError.ProviderError)
      expect({ status, code: error.code }).toEqual({ status, code })
      expect(error.message).toBe((JSON.parse(text) as { error: { message: string } }).error.message)
      expect(error.status).toBe(status)
      expect(error.provider).toBe("p")
    }
  })

  it("AC-20 [E-3] 500 with {\"error\":{\"type\":\"x\"}} and 502 with a text body → messages mention HTTP 500/502; codes still from status", () => {
    const a = LlmError.fromHttpResponse({ status: 500, body: "{\"error\":{\"type\":\"x\"}}" })
    expect(a.code).toBe("SERVER")
    expect(a.message).toContain("HTTP 500")
    const b = LlmError.fromHttpResponse({ status: 502, body: "<html>Bad Gateway</html>" })
    expect(b.code).toBe("SERVER")
    expect(b.message).toContain("HTTP 502")
    const c = LlmError.fromHttpResponse({ status: 401, body: "" })
    expect(c).toMatchObject({ code: "AUTH", message: "API error (HTTP 401)" })
    // a string `error` is the message (LM Studio, some proxies; issue 11), so the detector sees it
    const d = LlmError.fromHttpResponse({ status: 400, body: "{\"error\":\"context_length_exceeded\"}" })
    expect(d).toMatchObject({ code: "CONTEXT_WINDOW_EXCEEDED", message: "context_length_exceeded" })
    const e = LlmError.fromHttpResponse({ status: 429, body: "{}", retryAfterMillis: 2000 })
    expect(e).toMatchObject({ code: "RATE_LIMIT", retryAfterMillis: 2000 })
    const f = LlmError.fromHttpResponse({ status: 400, body: "{\"error\":{\"message\":\"\"}}" })
    expect(f.message).toBe("API error (HTTP 400)")
  })

  it("[E-6] Retry-After: delta seconds, HTTP date, milliseconds; garbage is absent", () => {
    const now = Date.parse("2025-01-01T00:00:00Z")
    expect(LlmError.parseRetryAfter("20", now)).toBe(20_000)
    expect(LlmError.parseRetryAfter("1.5", now)).toBe(1_500)
    expect(LlmError.parseRetryAfter("Wed, 01 Jan 2025 00:00:13 GMT", now)).toBe(13_000)
    expect(LlmError.parseRetryAfter("Tue, 31 Dec 2024 23:59:00 GMT", now)).toBe(0)
    expect(LlmError.parseRetryAfter("250", now, "ms")).toBe(250)
    expect(LlmError.parseRetryAfter("soon", now)).toBeUndefined()
    expect(LlmError.parseRetryAfter("", now)).toBeUndefined()
    expect(LlmError.parseRetryAfter(undefined, now)).toBeUndefined()
  })

  it("[E-6] isRetryable: RATE_LIMIT, SERVER, TRANSPORT, STREAM_CLOSED, TIMEOUT only", () => {
    const retryable = ["RATE_LIMIT", "SERVER", "TRANSPORT", "STREAM_CLOSED", "TIMEOUT"]
    const final = ["AUTH", "INVALID_REQUEST", "CONTEXT_WINDOW_EXCEEDED", "MALFORMED_RESPONSE", "HTTP_404", "CONTENT_FILTER", "UNKNOWN"]
    for (const code of retryable) expect(LlmError.isRetryable(LlmError.providerError(LlmError.toCode(code), "x"))).toBe(true)
    for (const code of final) expect(LlmError.isRetryable(LlmError.providerError(LlmError.toCode(code), "x"))).toBe(false)
    expect(LlmError.isRetryable(new LlmError.RegistryError({ code: "NO_ADAPTER", message: "x" }))).toBe(false)
  })
})

// ---------------------------------------------------------------------------------------------
// Error responses of the wire folders: the corpus test/fixtures/wire, and the captures in
// ../shared/fixtures/wire when present (read in place, never copied)

interface HttpFixture {
  readonly name: string
  readonly status: number
  readonly headers: ReadonlyMap<string, string>
  readonly body: string
  readonly expected: {
    readonly status: number
    readonly category: string
    readonly retryable: boolean
    readonly retryAfterMs: number | null
    readonly message?: string
  }
}

const categoryCode: Record<string, string> = {
  auth: "AUTH",
  "rate-limit": "RATE_LIMIT",
  server: "SERVER",
  overloaded: "SERVER",
  "context-length-exceeded": "CONTEXT_WINDOW_EXCEEDED",
  "invalid-request": "INVALID_REQUEST",
  quota: "HTTP_402"
}

const loadHttpFixtures = (root: FakeProvider.WireRoot): ReadonlyArray<HttpFixture> =>
  ["anthropic", "deepseek", "openai"].flatMap((dir) =>
    readdirSync(FakeProvider.inRoot(root, dir))
      .filter((f) => f.startsWith("error-") && f.endsWith(".http"))
      .map((f): HttpFixture => {
        const raw = readFileSync(FakeProvider.inRoot(root, `${dir}/${f}`), "utf8")
        const split = raw.indexOf("\r\n\r\n")
        const head = raw.slice(0, split).split("\r\n")
        const statusLine = head[0] ?? ""
        const headers = new Map(head.slice(1).map((line) => {
          const colon = line.indexOf(":")
          return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()] as const
        }))
        return {
          name: `${dir}/${f}`,
          status: Number(statusLine.split(" ")[1]),
          headers,
          body: raw.slice(split + 4),
          expected: JSON.parse(readFileSync(FakeProvider.inRoot(root, `${dir}/${f.replace(/\.http$/, ".expected.json")}`), "utf8"))
        }
      })
  )

describe("Wire error fixtures (E-2..E-4, E-6)", () => {
  it("every error-*.http fixture is classified as its .expected.json category says", () => {
    const fixtures = FakeProvider.wireRoots("error-fixture classification of the captures").flatMap(loadHttpFixtures)
    expect(fixtures.length).toBeGreaterThanOrEqual(11)
    for (const f of fixtures) {
      const code = categoryCode[f.expected.category]
      expect(code, `${f.name}: unknown category ${f.expected.category}`).toBeDefined()
      const retryAfterMillis = LlmError.parseRetryAfter(f.headers.get("retry-after"), Date.now())
      const error = LlmError.fromHttpResponse({ status: f.status, body: f.body, retryAfterMillis })
      const detail = LlmError.parseErrorBody(f.body)
      const summary = {
        status: error.status,
        code: error.code,
        retryable: LlmError.isRetryable(error),
        retryAfterMs: error.retryAfterMillis ?? null,
        overflow: LlmError.isContextOverflow([detail?.code, detail?.type, detail?.message].join(" "))
      }
      expect({ name: f.name, ...summary }).toEqual({
        name: f.name,
        status: f.expected.status,
        code,
        retryable: f.expected.retryable,
        retryAfterMs: f.expected.retryAfterMs,
        overflow: f.expected.category === "context-length-exceeded"
      })
      if (f.expected.message !== undefined) expect(error.message, f.name).toBe(f.expected.message)
    }
  })
})

describe("one error vocabulary (E-2, issue 11)", () => {
  it("[E-2] codes are a closed union: a misspelled code does not compile; unknown provider codes take the documented fallback", () => {
    // @ts-expect-error a misspelled canonical code is not a ProviderErrorCode
    const misspelled: LlmError.ProviderErrorCode = "RATE_LIMT"
    expect(misspelled).toBe("RATE_LIMT")
    const http: LlmError.ProviderErrorCode = "HTTP_418"
    expect(LlmError.toCode(http)).toBe("HTTP_418")
    expect(LlmError.toCode("RATE_LIMIT")).toBe("RATE_LIMIT")
    expect(LlmError.toCode("content-filter")).toBe("CONTENT_FILTER")
    expect(LlmError.providerCode("  ")).toBe("PROVIDER_ERROR")
    expect(() => new LlmError.ProviderError({ code: "lower" as LlmError.ProviderErrorCode, message: "x" })).toThrow()
  })

  it("[E-2, C-5] classifyProviderError: numeric codes are statuses, known codes then types, overflow first, else the upper-cased raw code", () => {
    const c = LlmError.classifyProviderError
    expect(c({ code: "429", message: "slow" })).toBe("RATE_LIMIT")
    expect(c({ code: "529", message: "Overloaded" })).toBe("SERVER")
    expect(c({ code: "400", message: "bad" })).toBe("INVALID_REQUEST")
    expect(c({ code: "rate_limit_exceeded", type: "requests", message: "x" })).toBe("RATE_LIMIT")
    expect(c({ type: "overloaded_error", message: "Overloaded" })).toBe("SERVER")
    expect(c({ code: "invalid_function_parameters", type: "invalid_request_error", message: "x" })).toBe("INVALID_REQUEST")
    expect(c({ code: "tool_use_failed", type: "invalid_request_error", message: "x" })).toBe("INVALID_REQUEST")
    expect(c({ type: "authentication_error", message: "x" })).toBe("AUTH")
    expect(c({ code: "model_not_found", message: "The model `x` does not exist" })).toBe("UNKNOWN_MODEL")
    expect(c({ type: "not_found_error", message: "no such route" })).toBe("HTTP_404")
    expect(c({ message: "This model's maximum context length is 8192 tokens", code: "400" })).toBe("CONTEXT_WINDOW_EXCEEDED")
    expect(c({ code: "mystery_error", message: "?" })).toBe("MYSTERY_ERROR")
    expect(c({ message: "no code at all" })).toBe("PROVIDER_ERROR")
  })
})
