/**
 * End-to-end: the bundled CLI, spawned, over every gateway and local-server profile with
 * `--base-url` pointing at a loopback fake server that speaks that gateway's wire format (issue 11,
 * "the CLI end to end over each gateway profile"). Per profile ONE process: the answer reaches
 * stdout, the usage line stderr; the fake server sees the profile's path, key placement (Bearer,
 * Azure's `api-key` header + `api-version` query + deployment path, none for local servers) and
 * model; the key never reaches stdout, stderr or the files the run wrote. The streams follow each
 * provider's published documentation (the same shapes as `test/Adapter/GatewayProfiles.test.ts`).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { readFileSync } from "node:fs"
import * as Cli from "../support/Cli.js"
import * as FakeProvider from "../support/FakeProvider.js"

const TIMEOUT = 60_000

const data = (payload: unknown) => `data: ${JSON.stringify(payload)}\n\n`
const chunk = (model: string, delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) =>
  data({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1735689600, model, choices: [{ index: 0, delta, finish_reason: finish }], ...extra })
const done = "data: [DONE]\n\n"
const usage = { prompt_tokens: 50, completion_tokens: 20, total_tokens: 70 }

interface Case {
  readonly provider: string
  /** path under the fake server's URL given as `--base-url` */
  readonly basePath: string
  /** key variable and value (none: a local server) */
  readonly keyVar: string | undefined
  readonly flags: ReadonlyArray<string>
  readonly env?: Readonly<Record<string, string>>
  readonly answer: string
  readonly stream: (answer: string) => string
  /** what the server must see */
  readonly path: string
  readonly keyHeader: "authorization" | "api-key" | undefined
  readonly model: string
}

const openAiStyle = (model: string, reasoning: "reasoning" | "reasoning_content" | undefined) => (answer: string) =>
  [
    chunk(model, { role: "assistant", content: "", ...(reasoning === undefined ? {} : { [reasoning]: "Short thought." }) }),
    chunk(model, { content: answer.slice(0, 6) }),
    chunk(model, { content: answer.slice(6) }),
    chunk(model, {}, "stop"),
    data({ id: "chatcmpl-1", object: "chat.completion.chunk", choices: [], usage }),
    done
  ].join("")

const cases: ReadonlyArray<Case> = [
  {
    provider: "gemini",
    basePath: "/v1beta/openai",
    keyVar: "GEMINI_API_KEY",
    flags: [],
    answer: "Gemini says hello.",
    // ai.google.dev/gemini-api/docs/openai: no chunk ids, usage on the finish chunk
    stream: (answer) =>
      [
        data({ choices: [{ delta: { content: answer.slice(0, 7), role: "assistant" }, index: 0 }], created: 1, model: "gemini-2.5-flash", object: "chat.completion.chunk" }),
        data({ choices: [{ delta: { content: answer.slice(7), role: "assistant" }, index: 0 }], created: 1, model: "gemini-2.5-flash", object: "chat.completion.chunk" }),
        data({ choices: [{ delta: { role: "assistant" }, finish_reason: "stop", index: 0 }], created: 1, model: "gemini-2.5-flash", object: "chat.completion.chunk", usage }),
        done
      ].join(""),
    path: "/v1beta/openai/chat/completions",
    keyHeader: "authorization",
    model: "gemini-2.5-flash"
  },
  {
    provider: "openrouter",
    basePath: "/api/v1",
    keyVar: "OPENROUTER_API_KEY",
    flags: ["--model", "openai/gpt-oss-120b"],
    answer: "OpenRouter says hello.",
    // openrouter.ai/docs: ": OPENROUTER PROCESSING" comments while queued, delta.reasoning
    stream: (answer) => ": OPENROUTER PROCESSING\n\n: OPENROUTER PROCESSING\n\n" + openAiStyle("openai/gpt-oss-120b", "reasoning")(answer),
    path: "/api/v1/chat/completions",
    keyHeader: "authorization",
    model: "openai/gpt-oss-120b"
  },
  {
    provider: "groq",
    basePath: "/openai/v1",
    keyVar: "GROQ_API_KEY",
    flags: [],
    answer: "Groq says hello.",
    // console.groq.com/docs: usage under x_groq on the last chunk
    stream: (answer) =>
      [
        chunk("llama-3.3-70b-versatile", { role: "assistant", content: "" }, null, { x_groq: { id: "req_1" } }),
        chunk("llama-3.3-70b-versatile", { content: answer }),
        chunk("llama-3.3-70b-versatile", {}, "stop", { x_groq: { id: "req_1", usage: { queue_time: 0.01, ...usage } } }),
        done
      ].join(""),
    path: "/openai/v1/chat/completions",
    keyHeader: "authorization",
    model: "llama-3.3-70b-versatile"
  },
  {
    provider: "together",
    basePath: "/v1",
    keyVar: "TOGETHER_API_KEY",
    flags: ["--model", "deepseek-ai/DeepSeek-R1"],
    answer: "Together says hello.",
    // docs.together.ai: reasoning in delta.reasoning, usage on the finish chunk
    stream: (answer) =>
      [
        chunk("deepseek-ai/DeepSeek-R1", { role: "assistant", reasoning: "Short thought." }),
        chunk("deepseek-ai/DeepSeek-R1", { content: answer }),
        chunk("deepseek-ai/DeepSeek-R1", {}, "stop", { usage }),
        done
      ].join(""),
    path: "/v1/chat/completions",
    keyHeader: "authorization",
    model: "deepseek-ai/DeepSeek-R1"
  },
  {
    provider: "azure",
    basePath: "",
    keyVar: "AZURE_OPENAI_API_KEY",
    flags: ["--model", "gpt-4o"],
    env: { AZURE_OPENAI_DEPLOYMENT: "gpt4o-prod", AZURE_OPENAI_API_VERSION: "2025-04-01-preview" },
    answer: "Azure says hello.",
    // learn.microsoft.com (Azure OpenAI): a first chunk with empty choices and prompt_filter_results
    stream: (answer) =>
      data({ choices: [], created: 0, id: "", model: "", object: "", prompt_filter_results: [{ prompt_index: 0, content_filter_results: {} }] }) +
      openAiStyle("gpt-4o", undefined)(answer),
    path: "/openai/deployments/gpt4o-prod/chat/completions?api-version=2025-04-01-preview",
    keyHeader: "api-key",
    model: "gpt-4o"
  },
  {
    provider: "ollama",
    basePath: "/v1",
    keyVar: undefined,
    flags: [],
    answer: "Ollama says hello.",
    stream: openAiStyle("llama3.2", "reasoning"),
    path: "/v1/chat/completions",
    keyHeader: undefined,
    model: "llama3.2"
  },
  {
    provider: "vllm",
    basePath: "/v1",
    keyVar: undefined,
    flags: ["--model", "Qwen/Qwen3-8B"],
    answer: "vLLM says hello.",
    stream: openAiStyle("Qwen/Qwen3-8B", "reasoning_content"),
    path: "/v1/chat/completions",
    keyHeader: undefined,
    model: "Qwen/Qwen3-8B"
  },
  {
    provider: "llamacpp",
    basePath: "/v1",
    keyVar: undefined,
    flags: [],
    answer: "llama.cpp says hello.",
    // llama-server: usage and timings on the finish chunk, no trailing usage chunk
    stream: (answer) =>
      [
        chunk("local", { role: "assistant", content: "", reasoning_content: "Short thought." }),
        chunk("local", { content: answer }),
        chunk("local", {}, "stop", { usage, timings: { predicted_ms: 1 } }),
        done
      ].join(""),
    path: "/v1/chat/completions",
    keyHeader: undefined,
    model: "local"
  },
  {
    provider: "lmstudio",
    basePath: "/v1",
    keyVar: undefined,
    flags: ["--model", "qwen3-8b"],
    answer: "LM Studio says hello.",
    stream: openAiStyle("qwen3-8b", "reasoning"),
    path: "/v1/chat/completions",
    keyHeader: undefined,
    model: "qwen3-8b"
  }
]

describe("harness CLI end to end over each gateway profile (issue 11)", () => {
  for (const c of cases) {
    it.live(
      `[P-11, P-12, C-6] --provider ${c.provider} --base-url <fake>: the answer on stdout, the key placement seen by the server, no key in the output`,
      () =>
        Effect.gen(function*() {
          const home = yield* Cli.tempDir("harness-gw-home-")
          const work = yield* Cli.tempDir("harness-gw-ws-")
          const key = `sk-gw-${c.provider}-5ecret-${Math.random().toString(36).slice(2)}`
          const fake = yield* FakeProvider.make({ replies: [FakeProvider.sse(c.stream(c.answer), { maxPiece: 40 })] })
          const result = yield* Cli.runCli(
            ["run", "--provider", c.provider, "--base-url", `${fake.url}${c.basePath}`, ...c.flags, "Say hello."],
            { cwd: work, home, env: { ...(c.keyVar === undefined ? {} : { [c.keyVar]: key }), ...c.env } }
          )
          expect(result.timedOut).toBe(false)
          expect(result.code, result.stderr).toBe(0)
          expect(result.stdout.trim()).toBe(c.answer)
          expect(Cli.linesOf(result.stderr).filter((l) => l.startsWith("usage:"))).toEqual(["usage: in 50 · out 20"])
          expect(result.stderr).not.toContain("offline demo")

          const requests = yield* fake.requests
          expect(requests).toHaveLength(1)
          const [sent] = requests
          expect(sent?.method).toBe("POST")
          expect(sent?.path).toBe(c.path)
          expect(sent?.headers["user-agent"]).toBe(Cli.expectedUserAgent)
          expect(sent?.headers["authorization"]).toBe(c.keyHeader === "authorization" ? `Bearer ${key}` : undefined)
          expect(sent?.headers["api-key"]).toBe(c.keyHeader === "api-key" ? key : undefined)
          expect((sent?.body as { model?: unknown } | undefined)?.model).toBe(c.model)

          // the key never leaves the request
          expect(result.stdout).not.toContain(key)
          expect(result.stderr).not.toContain(key)
          for (const file of [...Cli.filesUnder(home), ...Cli.filesUnder(work)]) {
            expect(readFileSync(file, "latin1"), file).not.toContain(key)
          }
          expect(Cli.sessionLogs(home)).toHaveLength(1)
        }),
      TIMEOUT
    )
  }

  it.live(
    "[P-12] a gateway without its key → one line naming the variable, exit 2, nothing sent",
    () =>
      Effect.gen(function*() {
        const home = yield* Cli.tempDir("harness-gw-home-")
        const work = yield* Cli.tempDir("harness-gw-ws-")
        const fake = yield* FakeProvider.make()
        const result = yield* Cli.runCli(
          ["run", "--provider", "groq", "--base-url", `${fake.url}/openai/v1`, "hello"],
          // an empty value counts as unset; another provider's key must not stand in for it
          { cwd: work, home, env: { GROQ_API_KEY: "", OPENROUTER_API_KEY: "sk-other-gateway" } }
        )
        expect(result.timedOut).toBe(false)
        expect(result.code, result.stderr).toBe(2)
        expect(Cli.linesOf(result.stderr)).toEqual(["missing API key for provider groq: set GROQ_API_KEY"])
        expect(result.stdout).toBe("")
        expect(yield* fake.requests).toHaveLength(0)
      }),
    TIMEOUT
  )
})
