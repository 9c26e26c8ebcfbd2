import { it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { describe, expect } from "vitest"
import type { HookAgent } from "../../../src/Loop/Hooks.js"
import * as Interception from "../../../src/Loop/Interception.js"
import * as AgentScoped from "../../../src/Loop/internal/AgentScoped.js"
import * as SystemPrompt from "../../../src/Loop/SystemPrompt.js"

const agentNamed = (id: string): HookAgent => ({ id }) as unknown as HookAgent
const context = (agentId: string) => ({ agentId, provider: "p", model: "m", cwd: undefined, turn: 1, step: 1 })

describe("agent-scoped registrations are looked up by agent id (issue 20)", () => {
  it("[L-36] a lookup touches the global entries and the agent's own only, whatever the number of agents", () => {
    const scannedFor = (agents: number): number => {
      const r = AgentScoped.make<string>()
      r.add("g1", undefined)
      r.add("g2", undefined)
      for (let i = 0; i < agents; i++) {
        r.add(`a${i}-1`, `agent-${i}`)
        r.add(`a${i}-2`, `agent-${i}`)
      }
      const before = r.scanned()
      expect(r.values("agent-7")).toEqual(["g1", "g2", "a7-1", "a7-2"])
      const first = r.scanned() - before
      // cached: the next lookups touch nothing until a registration changes
      for (let i = 0; i < 100; i++) r.values("agent-7")
      expect(r.scanned() - before).toBe(first)
      expect(r.values("nobody")).toEqual(["g1", "g2"])
      return first
    }
    expect(scannedFor(10)).toBe(4)
    expect(scannedFor(10_000)).toBe(4)
  })

  it("[L-36] removing and adding keep order and invalidate only what changed", () => {
    const r = AgentScoped.make<string>()
    const g = r.add("g", undefined)
    const a = r.add("a", "x")
    r.add("b", "x")
    expect(r.values("x")).toEqual(["g", "a", "b"])
    r.remove(a)
    expect(r.values("x")).toEqual(["g", "b"])
    r.remove(g)
    expect(r.values("x")).toEqual(["b"])
    r.add("h", undefined)
    expect(r.values("x")).toEqual(["h", "b"])
    expect(r.values(undefined)).toEqual(["h"])
  })

  it.effect("[L-36] a waterfall run for one agent scans the same number of registrations with 10 or 1,000 agents", () =>
    Effect.gen(function*() {
      const scannedFor = (agents: number) =>
        Effect.gen(function*() {
          const point = yield* Interception.waterfall<number, number>("test")
          yield* point.register((n, next) => next(n + 1))
          for (let i = 0; i < agents; i++) {
            yield* point.register((n, next) => next(n * 10), { agentId: `agent-${i}` })
          }
          const before = point.scanned()
          const out = yield* point.run("agent-3", 1, (n) => Effect.succeed(n))
          expect(out).toBe(20)
          yield* point.run("agent-3", 1, (n) => Effect.succeed(n))
          return point.scanned() - before
        })
      const few = yield* scannedFor(10)
      const many = yield* scannedFor(1_000)
      expect(few).toBe(2)
      expect(many).toBe(few)
    }))

  it.effect("[L-31] a system prompt assembly scans the same number of sections with 10 or 1,000 agents", () =>
    Effect.gen(function*() {
      const scannedFor = (agents: number) =>
        Effect.gen(function*() {
          const prompt = yield* SystemPrompt.make
          yield* prompt.registerSection({ name: "identity", order: -100, text: "I am {{model}}." })
          yield* prompt.registerVariable("team", () => "global team")
          for (let i = 0; i < agents; i++) {
            yield* prompt.registerSection({ name: "persona", order: 0, text: `persona ${i} of {{team}}` }, {
              agentId: `agent-${i}`
            })
            yield* prompt.registerVariable("team", () => `team ${i}`, { agentId: `agent-${i}` })
          }
          const before = prompt.scanned()
          const assembled = yield* prompt.assemble({ agent: agentNamed("agent-5"), context: context("agent-5"), tools: [] })
          expect(assembled.system).toBe("I am m.\n\npersona 5 of team 5")
          return prompt.scanned() - before
        })
      const few = yield* scannedFor(10)
      const many = yield* scannedFor(1_000)
      expect(few).toBeGreaterThan(0)
      expect(many).toBe(few)
    }))
})
