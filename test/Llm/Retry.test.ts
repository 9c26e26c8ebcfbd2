import { describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as References from "effect/References"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import * as Scripted from "../../src/Adapter/Scripted.js"
import * as Llm from "../../src/Llm/Llm.js"
import { ProviderError, RegistryError } from "../../src/Llm/LlmError.js"
import * as Message from "../../src/Llm/Message.js"
import * as Retry from "../../src/Llm/Retry.js"
import type * as StreamChunk from "../../src/Llm/StreamChunk.js"

const request: Message.GenerateOptions = { provider: "scripted", model: "m", messages: [Message.user("hi")] }

/** `Llm` with the scripted adapter registered, under a policy with no jitter unless overridden. */
const setup = (script: Scripted.Script, overrides: Retry.RetryPolicyInput = {}) =>
  Layer.mergeAll(
    Layer.provideMerge(Scripted.layerLlm(script), Llm.layer),
    Retry.layer({ jitter: 0, ...overrides })
  )

/** Lets forked fibers run until they block (on a sleep, a timeout or forever). */
const settle = Effect.repeat(Effect.yieldNow, Schedule.recurs(100))

const calls = Effect.map(Scripted.requests, (r) => r.length)

const collect = Stream.runCollect(Llm.stream(request))

describe("Retry policy (DEC-3, E-6)", () => {
  it.effect("[E-6] RATE_LIMIT before the first chunk is retried after Retry-After (TestClock), then succeeds", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.forkChild(collect)
      yield* settle
      expect(yield* calls).toBe(1)
      yield* TestClock.adjust("2999 millis")
      yield* settle
      expect(yield* calls).toBe(1)
      yield* TestClock.adjust("1 millis")
      yield* settle
      expect(yield* calls).toBe(2)
      const chunks = yield* Fiber.join(fiber)
      expect(chunks).toEqual(Scripted.toChunks(Scripted.text("ok")))
    }).pipe(Effect.provide(setup([
      [Scripted.fail("RATE_LIMIT", "slow down", { status: 429, retryAfterMillis: 3_000 })],
      Scripted.text("ok")
    ]))))

  it.effect("[E-6] a Retry-After beyond the cap waits only the cap", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.forkChild(collect)
      yield* settle
      yield* TestClock.adjust("9999 millis")
      yield* settle
      expect(yield* calls).toBe(1)
      yield* TestClock.adjust("1 millis")
      yield* settle
      expect(yield* calls).toBe(2)
      yield* Fiber.join(fiber)
    }).pipe(Effect.provide(setup([
      [Scripted.fail("RATE_LIMIT", "come back in an hour", { status: 429, retryAfterMillis: 3_600_000 })],
      Scripted.text("ok")
    ], { retryAfterCap: "10 seconds" }))))

  it.effect("[E-6] without Retry-After: exponential backoff (500, 1000, 2000 ms) and attempts bounded by maxAttempts", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.forkChild(Effect.result(collect))
      const at: Array<number> = []
      // walk the clock in 100 ms steps and note when each call happens
      for (let t = 0; t <= 5_000; t += 100) {
        yield* settle
        const n = yield* calls
        while (at.length < n) at.push(t)
        yield* TestClock.adjust("100 millis")
      }
      expect(at).toEqual([0, 500, 1500, 3500])
      const result = yield* Fiber.join(fiber)
      expect(result).toMatchObject({ _tag: "Failure", failure: { code: "SERVER", message: "attempt 4" } })
    }).pipe(Effect.provide(setup([
      [Scripted.fail("SERVER", "attempt 1")],
      [Scripted.fail("TRANSPORT", "attempt 2")],
      [Scripted.fail("STREAM_CLOSED", "attempt 3")],
      [Scripted.fail("SERVER", "attempt 4")],
      Scripted.text("never reached")
    ]))))

  it.effect("[E-6] no retry once a chunk of the attempt was emitted: the failure reaches the consumer after the chunks", () =>
    Effect.gen(function*() {
      const seen: Array<StreamChunk.StreamChunk> = []
      const error = yield* Effect.flip(Stream.runForEach(Llm.stream(request), (c) => Effect.sync(() => seen.push(c))))
      expect(error).toMatchObject({ _tag: "ProviderError", code: "SERVER" })
      expect(seen.length).toBeGreaterThan(0)
      expect(yield* calls).toBe(1)
    }).pipe(Effect.provide(setup([
      [Scripted.chunk({ type: "text-delta", index: 0, text: "Hel" }), Scripted.fail("SERVER", "mid-stream")],
      Scripted.text("never reached")
    ]))))

  it.effect("[E-6] no retry on AUTH, INVALID_REQUEST, CONTEXT_WINDOW_EXCEEDED, MALFORMED_RESPONSE, HTTP_404, SCRIPT_EXHAUSTED", () =>
    Effect.gen(function*() {
      for (const code of ["AUTH", "INVALID_REQUEST", "CONTEXT_WINDOW_EXCEEDED", "MALFORMED_RESPONSE", "HTTP_404"]) {
        const result = yield* Effect.gen(function*() {
          const error = yield* Effect.flip(collect)
          return { code: error.code, calls: yield* calls }
        }).pipe(Effect.provide(setup([[Scripted.fail(code)], Scripted.text("never")])))
        expect(result).toEqual({ code, calls: 1 })
      }
      const exhausted = yield* Effect.gen(function*() {
        const error = yield* Effect.flip(collect)
        return { code: error.code, calls: yield* calls }
      }).pipe(Effect.provide(setup([])))
      expect(exhausted).toEqual({ code: "SCRIPT_EXHAUSTED", calls: 1 })
    }))

  it.effect("[E-6] a registry failure (NO_ADAPTER) is never retried", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Stream.runDrain(Llm.stream({ ...request, provider: "missing" })))
      expect(error).toBeInstanceOf(RegistryError)
      expect(yield* calls).toBe(0)
    }).pipe(Effect.provide(setup([Scripted.text("x")]))))

  it.effect("[DEC-3] defaults apply without any layer; timers are sized for reasoning models (decision 0006)", () =>
    Effect.gen(function*() {
      expect(yield* Retry.Policy).toEqual(Retry.defaultPolicy)
      expect(Duration.toMinutes(Retry.defaultPolicy.firstByteTimeout)).toBe(10)
      expect(Duration.toMinutes(Retry.defaultPolicy.idleTimeout)).toBe(5)
      // a first-byte timeout must still leave room for a retry within the deadline
      expect(Duration.isGreaterThan(Retry.defaultPolicy.maxElapsed, Retry.defaultPolicy.firstByteTimeout)).toBe(true)
    }))

  it.effect("[DEC-3] chunks are not timed here: a scripted adapter that stalls before its first chunk is not cut", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.forkChild(collect)
      yield* settle
      yield* TestClock.adjust("2 hours")
      yield* settle
      expect(fiber.pollUnsafe()).toBeUndefined()
      expect(yield* calls).toBe(1)
      yield* Fiber.interrupt(fiber)
    }).pipe(Effect.provide(setup([[Scripted.forever]], { firstByteTimeout: "1 second", idleTimeout: "1 second" }))))

  it.effect("[E-6] every retry is logged at warning level with code, attempt and delay", () =>
    Effect.gen(function*() {
      const logs: Array<{ readonly level: string; readonly annotations: Record<string, unknown> }> = []
      // Effect 4: annotations live in the fiber's `CurrentLogAnnotations`; levels are spelled `Warn` (v3 `WARN`)
      const logger = Logger.make(({ fiber, logLevel }) => {
        logs.push({ level: logLevel, annotations: { ...fiber.getRef(References.CurrentLogAnnotations) } })
      })
      const fiber = yield* Effect.forkChild(collect.pipe(Effect.provide(Logger.layer([logger]))))
      yield* settle
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(fiber)
      expect(logs).toEqual([{
        level: "Warn",
        annotations: { code: "SERVER", message: "boom", attempt: 1, nextAttempt: 2, delayMillis: 500, provider: "scripted" }
      }])
    }).pipe(Effect.provide(setup([[Scripted.fail("SERVER", "boom")], Scripted.text("ok")]))))

  it.effect("[E-6] interrupting the consumer during a backoff stops retrying", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.forkChild(collect)
      yield* settle
      yield* Fiber.interrupt(fiber)
      expect(Exit.hasInterrupts(yield* Fiber.await(fiber))).toBe(true)
      yield* TestClock.adjust("1 minute")
      yield* settle
      expect(yield* calls).toBe(1)
    }).pipe(Effect.provide(setup([[Scripted.fail("SERVER")], Scripted.text("never")]))))

  it.effect("[E-6] a per-stream policy override (Stream.provideService) wins over the layer", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        Stream.runDrain(Llm.stream(request).pipe(Stream.provideServiceEffect(Retry.Policy, Effect.fromResult(Retry.policy({ maxAttempts: 1 })))))
      )
      expect(error.code).toBe("SERVER")
      expect(yield* calls).toBe(1)
    }).pipe(Effect.provide(setup([[Scripted.fail("SERVER")], Scripted.text("ok")]))))
})

describe("Retry.decide and Retry.delayFor (pure)", () => {
  const policy = Result.getOrThrow(Retry.policy({ jitter: 0.25 }))
  const server = new ProviderError({ code: "SERVER", message: "x" })
  const base = { policy, error: server, attempt: 1, emitted: false, elapsedMillis: 0, random: 0 }

  it("[E-6] backoff doubles per attempt, is capped at maxDelay, and jitter only shortens it by up to `jitter`", () => {
    const ms = (attempt: number, random: number) => Duration.toMillis(Retry.delayFor(policy, server, attempt, random))
    expect([1, 2, 3, 4].map((a) => ms(a, 0))).toEqual([500, 1000, 2000, 4000])
    expect(ms(20, 0)).toBe(30_000)
    expect(ms(1, 0.999)).toBeGreaterThanOrEqual(375)
    expect(ms(1, 0.999)).toBeLessThan(500)
  })

  it("[E-6] Retry-After is used as given (no jitter) up to the cap", () => {
    const limited = new ProviderError({ code: "RATE_LIMIT", message: "x", retryAfterMillis: 13_000 })
    expect(Duration.toMillis(Retry.delayFor(policy, limited, 3, 0.9))).toBe(13_000)
    const long = new ProviderError({ code: "RATE_LIMIT", message: "x", retryAfterMillis: 600_000 })
    expect(Duration.toMillis(Retry.delayFor(policy, long, 1, 0))).toBe(60_000)
  })

  it("[E-6] decisions: emitted, not retryable, attempts exhausted, overall deadline", () => {
    expect(Retry.decide({ ...base, emitted: true })).toEqual({ _tag: "Fail", reason: "emitted" })
    expect(Retry.decide({ ...base, error: new ProviderError({ code: "AUTH", message: "x" }) })).toEqual({
      _tag: "Fail",
      reason: "not-retryable"
    })
    expect(Retry.decide({ ...base, attempt: 4 })).toEqual({ _tag: "Fail", reason: "attempts" })
    expect(Retry.decide({ ...base, elapsedMillis: 25 * 60_000 - 400 })).toEqual({ _tag: "Fail", reason: "deadline" })
    expect(Retry.decide(base)).toEqual({ _tag: "Retry", delay: Duration.millis(500) })
  })

  it("[E-6] invalid knobs are a typed RetryPolicyError (never a throw)", () => {
    for (const bad of [{ maxAttempts: 0 }, { maxAttempts: 1.5 }, { jitter: 2 }, { baseDelay: "soon" as Duration.Input }] as ReadonlyArray<Retry.RetryPolicyInput>) {
      const result = Retry.policy(bad)
      expect(Result.isFailure(result) && result.failure).toMatchObject({ _tag: "RetryPolicyError", code: "INVALID_RETRY_POLICY" })
    }
    expect(Result.getOrThrow(Retry.policy({ baseDelay: "1 second" })).baseDelay).toEqual(Duration.seconds(1))
  })

  it.effect("[E-6] an invalid policy fails the layer with the typed error, not a defect", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Effect.provide(Effect.service(Retry.Policy), Retry.layer({ maxAttempts: -1 })))
      expect(error).toBeInstanceOf(Retry.RetryPolicyError)
      expect(error.message).toMatch(/maxAttempts/)
    }))
})
