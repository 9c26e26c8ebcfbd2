/**
 * End-to-end (issue 10, DEC-12): stdout carries only JSON Lines under `--json`, whatever the
 * provider answers; diagnostics go to stderr, one line each.
 *
 * Every error response fixture of the wire folders (the corpus `test/fixtures/wire`, and the captures
 * `../shared/fixtures/wire` when present) is served by the fake provider:
 * - retryable ones (429, 500, 503, 529) once, then a good answer: exit 0, stdout passes a strict
 *   JSON Lines parser and carries one `notice/retry` line; stderr has the retry's one-line warning.
 *   (The fixtures' `Retry-After` header is dropped so the backoff stays short; body and status are
 *   served as captured.)
 * - the others (400, 401, 402): exit 3, stdout strict JSON Lines, one `error:` line on stderr.
 * - a retryable one until the attempts run out: one notice and one warning per retry, then exit 3.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { readdirSync, readFileSync } from "node:fs"
import * as Cli from "../../support/Cli.js"
import * as Wire from "../../support/CliWire.js"
import * as FakeProvider from "../../support/FakeProvider.js"

const TIMEOUT = 120_000

interface Provider {
  readonly dir: "anthropic" | "deepseek" | "openai"
  readonly wire: Wire.Wire
  readonly keyVar: string
  readonly flags: (url: string) => ReadonlyArray<string>
}

const providers: ReadonlyArray<Provider> = [
  {
    dir: "anthropic",
    wire: "anthropic",
    keyVar: "ANTHROPIC_API_KEY",
    flags: (url) => ["--provider", "anthropic", "--base-url", url]
  },
  { dir: "deepseek", wire: "deepseek", keyVar: "DEEPSEEK_API_KEY", flags: (url) => ["--provider", "deepseek", "--base-url", url] },
  {
    dir: "openai",
    wire: "openai-compatible",
    keyVar: "OPENAI_COMPATIBLE_API_KEY",
    flags: (url) => ["--provider", "openai-compatible", "--model", "m", "--base-url", `${url}/v1`]
  }
]

interface Fixture {
  readonly name: string
  readonly path: string
  readonly provider: Provider
  readonly status: number
  readonly retryable: boolean
}

const fixturesIn = (root: FakeProvider.WireRoot): ReadonlyArray<Fixture> =>
  providers.flatMap((provider) =>
    readdirSync(FakeProvider.inRoot(root, provider.dir))
      .filter((f) => /^error-.*\.http$/.test(f))
      .map((f) => {
        const name = `${provider.dir}/${f}`
        const expected = JSON.parse(readFileSync(FakeProvider.inRoot(root, name.replace(/\.http$/, ".expected.json")), "utf8")) as {
          readonly status: number
          readonly retryable: boolean
        }
        return { name, path: FakeProvider.inRoot(root, name), provider, status: expected.status, retryable: expected.retryable }
      })
  )

/** per folder: the statuses of its retryable fixtures, and how many non-retryable ones it has at least */
const shape: Record<string, { readonly retryable: ReadonlyArray<number>; readonly final: number }> = {
  corpus: { retryable: [429, 429, 500, 503, 529], final: 6 },
  captures: { retryable: [429, 429, 429, 500, 503, 529], final: 8 }
}

/** An error response without its `Retry-After` header (the body and status as written or captured). */
const served = (fixture: Fixture): FakeProvider.Reply => {
  const reply = FakeProvider.httpFile(fixture.path)
  if (reply._tag !== "Http") return reply
  const { ["retry-after"]: _dropped, ...headers } = reply.headers
  return { ...reply, headers }
}

/**
 * A strict JSON Lines parser: the text is empty or ends with a newline, and every line is one JSON
 * object with a string `type`. Throws naming the offending line.
 */
const strictJsonLines = (text: string): Array<{ readonly type: string } & Record<string, unknown>> => {
  if (text === "") return []
  if (!text.endsWith("\n")) throw new Error("stdout does not end with a newline")
  return text.slice(0, -1).split("\n").map((line, i) => {
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch {
      throw new Error(`stdout line ${i + 1} is not JSON: ${line.slice(0, 200)}`)
    }
    if (typeof value !== "object" || value === null || Array.isArray(value) || typeof (value as { type?: unknown }).type !== "string") {
      throw new Error(`stdout line ${i + 1} is not an object with a type: ${line.slice(0, 200)}`)
    }
    return value as { readonly type: string } & Record<string, unknown>
  })
}

/** stderr holds one-line diagnostics: no stack frames, no indented or JSON dump lines. */
const expectOneLineDiagnostics = (stderr: string) => {
  expect(stderr).not.toMatch(Cli.stackFrame)
  for (const line of Cli.linesOf(stderr)) {
    expect(line, stderr).not.toMatch(/^\s/)
    expect(line, stderr).not.toMatch(/^[{}[\]"]/)
  }
}

const run = (fixture: Fixture, replies: ReadonlyArray<FakeProvider.Reply>) =>
  Effect.scoped(Effect.gen(function*() {
    const home = yield* Cli.tempDir("harness-e2e-home-")
    const work = yield* Cli.tempDir("harness-e2e-ws-")
    const fake = yield* FakeProvider.make({ replies })
    const result = yield* Cli.runCli(["run", "--json", ...fixture.provider.flags(fake.url), "hello"], {
      cwd: work,
      home,
      env: { [fixture.provider.keyVar]: "sk-e2e-streams" }
    })
    return { result, requests: (yield* fake.requests).length }
  }))

for (const root of FakeProvider.wireRoots("end-to-end error-fixture streams of the captures")) describe(`harness CLI end to end: clean output streams (issue 10, DEC-12), ${root.label}`, () => {
  const fixtures = fixturesIn(root)

  it.live(
    "[issue 10, DEC-3, DEC-12] every retryable error fixture, then an answer: exit 0, strict JSON Lines with one notice/retry, one warning line on stderr",
    () =>
      Effect.gen(function*() {
        const retryable = fixtures.filter((f) => f.retryable)
        expect(retryable.map((f) => f.status).sort()).toEqual(shape[root.label]?.retryable)
        yield* Effect.forEach(retryable, (fixture) =>
          Effect.gen(function*() {
            const { requests, result } = yield* run(fixture, [
              served(fixture),
              FakeProvider.sse(Wire.text(fixture.provider.wire, "RECOVERED answer", { input: 5, output: 3, cacheRead: 0 }))
            ])
            const label = `${fixture.name}\n${result.stderr}`
            expect(result.code, label).toBe(0)
            expect(requests, label).toBe(2)
            const lines = strictJsonLines(result.stdout)
            const notices = lines.filter((l) => l.type === "notice/retry")
            expect(notices, label).toHaveLength(1)
            expect(notices[0]).toMatchObject({ attempt: 1, code: expect.stringMatching(/^(RATE_LIMIT|SERVER)$/) })
            expect(typeof notices[0]?.["delayMs"]).toBe("number")
            expect(typeof notices[0]?.["message"]).toBe("string")
            expect(lines[0]?.type, label).toBe("init")
            expect(lines.at(-2), label).toMatchObject({ type: "turn/end", data: { reason: { kind: "completed" } } })
            expect(lines.at(-1), label).toMatchObject({ type: "result", subtype: "success", result: "RECOVERED answer" })
            expectOneLineDiagnostics(result.stderr)
            // the test's model id is not in the catalog: its one notice (K-1) is not a retry warning
            const warnings = Cli.linesOf(result.stderr).filter((l) => l.startsWith("warning:") && !l.includes("model catalog:"))
            expect(warnings, label).toHaveLength(1)
            expect(warnings[0]).toContain("retrying")
          }), { concurrency: 3, discard: true })
      }),
    TIMEOUT
  )

  it.live(
    "[issue 10, DEC-12, P-9] every non-retryable error fixture: exit 3, strict JSON Lines ending turn/end error, one error line on stderr",
    () =>
      Effect.gen(function*() {
        const final = fixtures.filter((f) => !f.retryable)
        expect(final.length).toBeGreaterThanOrEqual(shape[root.label]?.final ?? Infinity)
        yield* Effect.forEach(final, (fixture) =>
          Effect.gen(function*() {
            const { result } = yield* run(fixture, [served(fixture)])
            const label = `${fixture.name}\n${result.stderr}`
            expect(result.code, label).toBe(3)
            const lines = strictJsonLines(result.stdout)
            expect(lines.filter((l) => l.type === "notice/retry"), label).toEqual([])
            expect(lines[0]?.type, label).toBe("init")
            expect(lines.at(-2), label).toMatchObject({ type: "turn/end", data: { reason: { kind: "error" } } })
            expect(lines.at(-1), label).toMatchObject({ type: "result", subtype: "error", turn_end_reason: { kind: "error" } })
            expectOneLineDiagnostics(result.stderr)
            expect(Cli.linesOf(result.stderr).filter((l) => /error/i.test(l)), label).toHaveLength(1)
          }), { concurrency: 4, discard: true })
      }),
    TIMEOUT
  )

  it.live(
    "[issue 10, DEC-3] a 503 on every attempt: one notice/retry and one warning per retry (3), then exit 3, stdout still strict JSON Lines",
    () =>
      Effect.gen(function*() {
        const fixture = fixtures.find((f) => f.name === "deepseek/error-503-server-overloaded.http")
        expect(fixture).toBeDefined()
        const { requests, result } = yield* run(fixture!, Array.from({ length: 4 }, () => served(fixture!)))
        expect(result.code, result.stderr).toBe(3)
        expect(requests).toBe(4)
        const notices = strictJsonLines(result.stdout).filter((l) => l.type === "notice/retry")
        expect(notices.map((n) => n["attempt"])).toEqual([1, 2, 3])
        expectOneLineDiagnostics(result.stderr)
        expect(Cli.linesOf(result.stderr).filter((l) => l.startsWith("warning:"))).toHaveLength(3)
        expect(Cli.linesOf(result.stderr).at(-1)).toMatch(/^error: provider error SERVER/)
      }),
    TIMEOUT
  )
})
