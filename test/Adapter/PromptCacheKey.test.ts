import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as OpenAiCompatible from "../../src/Adapter/OpenAiCompatible.js"
import * as Message from "../../src/Llm/Message.js"

const apiKey = Redacted.make("sk-test")
const request = (sessionId?: string): Message.GenerateOptions => ({
  provider: "p",
  model: "m",
  messages: [Message.user("hi")],
  ...(sessionId === undefined ? {} : { sessionId: Message.sessionId(sessionId) })
})
const body = (options: OpenAiCompatible.Options, sessionId?: string) =>
  Effect.map(OpenAiCompatible.resolve(options), (resolved) => OpenAiCompatible.buildBody(resolved, request(sessionId)))

describe("OpenAI-compatible prompt caching (issue 30, DEC-17)", () => {
  it.effect("prompt_cache_key = the session id where the profile accepts it (OpenAI), never elsewhere unless asked", () =>
    Effect.gen(function*() {
      expect((yield* body({ profile: "openai", apiKey }, "s-1"))["prompt_cache_key"]).toBe("s-1")
      expect(yield* body({ profile: "openai", apiKey })).not.toHaveProperty("prompt_cache_key")
      expect(yield* body({ profile: "deepseek", apiKey }, "s-1")).not.toHaveProperty("prompt_cache_key")
      expect(yield* body({ profile: "generic", baseUrl: "http://127.0.0.1:1" }, "s-1")).not.toHaveProperty("prompt_cache_key")
      expect((yield* body({ profile: "generic", baseUrl: "http://127.0.0.1:1", promptCacheKey: true }, "s-1"))["prompt_cache_key"]).toBe("s-1")
      expect(yield* body({ profile: "openai", apiKey, promptCacheKey: false }, "s-1")).not.toHaveProperty("prompt_cache_key")
    }))

  it("usage: DeepSeek's prompt_cache_hit_tokens and OpenAI's cached_tokens become cache reads (input excludes them)", () => {
    expect(OpenAiCompatible.mapUsage({ prompt_tokens: 1000, prompt_cache_hit_tokens: 960, prompt_cache_miss_tokens: 40, completion_tokens: 5 }))
      .toEqual({ inputTokens: 40, outputTokens: 5, cacheReadTokens: 960 })
    expect(OpenAiCompatible.mapUsage({ prompt_tokens: 2000, prompt_tokens_details: { cached_tokens: 1536 }, completion_tokens: 7 }))
      .toEqual({ inputTokens: 464, outputTokens: 7, cacheReadTokens: 1536 })
  })
})
