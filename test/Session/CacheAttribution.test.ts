import { describe, expect, it } from "vitest"
import * as ContentBlock from "../../src/Llm/ContentBlock.js"
import * as Message from "../../src/Llm/Message.js"
import * as CacheAttribution from "../../src/Session/CacheAttribution.js"
import * as Projection from "../../src/Session/Projection.js"
import * as Surface from "../../src/Session/Surface.js"
import { LogBuilder } from "../support/sessionLog.js"

const tools = [{ name: "read", description: "Read a file", parameters: { type: "object" } }]
const header = (extra: Record<string, unknown> = {}) => ({
  config: { provider: "scripted", model: "m1" },
  system: "You are terse.",
  tools,
  ...extra
})

/** two completed turns (the first with a tool step); returns the builder */
const base = (): LogBuilder => {
  const b = new LogBuilder()
  b.turnStart(1).user("read the README")
  b.stepStart(1, 1)
  b.push("request/header", { header: header(), reason: "initial" })
  b.assistant(1, 1, "", [{ id: "c1", name: "read", args: "{\"path\":\"README.md\"}" }])
  b.toolResult(1, 1, "c1", "# README\nhello")
  b.stepEnd(1, 1)
  b.stepStart(1, 2)
  b.assistant(1, 2, "It says hello.")
  b.stepEnd(1, 2).turnEnd(1)
  return b
}

/** a further turn whose single step sends a request (after `before` ran on the builder) */
const nextTurn = (b: LogBuilder, before: (b: LogBuilder) => void = () => {}): LogBuilder => {
  b.turnStart(2).user("and now?")
  before(b)
  b.stepStart(2, 1)
  return b
}

const last = (b: LogBuilder, ttl?: (provider: string) => number | undefined) => {
  const all = CacheAttribution.ofLog(b.events, ttl)
  return all[all.length - 1]!.attribution
}

describe("prefix attribution (issue 30, DEC-17)", () => {
  it("the first request has no previous one; an appended request shares the previous request whole", () => {
    const b = nextTurn(base())
    const all = CacheAttribution.ofLog(b.events)
    expect(all.map((a) => [a.turn, a.step])).toEqual([[1, 1], [1, 2], [2, 1]])
    expect(all[0]!.attribution).toMatchObject({ prefixBytes: 0 })
    expect(all[0]!.attribution.cause).toBeUndefined()
    for (let i = 1; i < all.length; i++) {
      const a = all[i]!.attribution
      expect(a.cause).toBeUndefined()
      expect(a.divergence).toBeUndefined()
      // the whole previous request is the prefix
      expect(a.prefixBytes).toBe(all[i - 1]!.attribution.requestBytes)
      expect(a.prefixTokens).toBe(Math.ceil(a.prefixBytes / CacheAttribution.BYTES_PER_TOKEN))
    }
  })

  it("model changed: the route diverges, nothing is shared", () => {
    const b = nextTurn(base())
    b.push("request/header", { header: header({ config: { provider: "scripted", model: "m2" } }), reason: "change" })
    const a = last(b)
    expect(a).toMatchObject({ cause: "model-changed", divergence: { part: "route" } })
    expect(a.prefixBytes).toBeLessThan(40)
  })

  it("tool list changed: the route is shared, the tools diverge", () => {
    const b = nextTurn(base())
    b.push("request/header", {
      header: header({ tools: [...tools, { name: "mcp__x__search", description: "Search", parameters: { type: "object" } }] }),
      reason: "change"
    })
    expect(last(b)).toMatchObject({ cause: "tool-list-changed", divergence: { part: "tools" } })
  })

  it("system prompt changed: route and tools are shared, the system prompt diverges", () => {
    const b = nextTurn(base())
    b.push("request/header", { header: header({ system: "You are verbose." }), reason: "change" })
    const a = last(b)
    expect(a).toMatchObject({ cause: "system-prompt-changed", divergence: { part: "system" } })
    expect(a.prefixBytes).toBeGreaterThan(JSON.stringify(tools).length)
  })

  it("compaction: the first replaced message, and the summary event it came from", () => {
    const b = nextTurn(base(), (b) => {
      b.push("compact/start", { turn: 2, trigger: "manual", pressureTokens: 100, contextWindow: 1000 })
      b.push("compact/summary", {
        turn: 2,
        provider: "scripted",
        model: "m1",
        maxTokens: 100,
        instruction: "summarize",
        shadowedSeqs: [1, 5],
        range: { start: 1, end: 5 },
        shadowedTokens: 50,
        summary: "read README: hello",
        rawOutput: "read README: hello",
        droppedCitations: 0
      })
      b.push("user/message", { content: [{ type: "text", text: "Summary: read README: hello" }], source: { kind: "plugin", id: "compaction" } }, {
        surfaceOp: { op: "replace", start: 1, end: 5 },
        sourceEventSeqs: [1, 4, 5]
      })
      b.push("compact/end", { turn: 2, pressureBefore: 100, pressureAfter: 20 })
    })
    const summarySeq = b.events.find((e) => e.type === "user/message" && e.surfaceOp !== "append")!.seq
    expect(last(b)).toMatchObject({
      cause: "compaction",
      divergence: { part: "messages", messageIndex: 0, eventSeq: summarySeq }
    })
  })

  it("history rewritten by a hook: a surface replace without a compaction", () => {
    const b = nextTurn(base(), (b) => {
      b.push("tool/result", { turn: 2, step: 0, callId: "c1", content: [{ type: "text", text: "[pruned]" }], isError: false }, {
        surfaceOp: { op: "replace", start: 5, end: 5 },
        sourceEventSeqs: [5]
      })
    })
    const replaced = b.events[b.events.length - 2]!.seq
    expect(last(b)).toMatchObject({
      cause: "history-rewritten",
      divergence: { part: "messages", messageIndex: 2, eventSeq: replaced }
    })
  })

  it("provider rule repair: the same log event projected differently for the provider", () => {
    const user = Message.user("hi")
    const before: CacheAttribution.Sent = {
      request: { provider: "p", model: "m", messages: [user, Message.assistant([ContentBlock.text("a"), ContentBlock.reasoning("r")])] },
      messageSeqs: [1, 5],
      time: 0
    }
    const after: CacheAttribution.Sent = {
      request: { provider: "p", model: "m", messages: [user, Message.assistant([ContentBlock.text("a")]), Message.user("next")] },
      messageSeqs: [1, 5, 9],
      time: 1
    }
    expect(CacheAttribution.attribute(before, after, [], undefined)).toMatchObject({
      cause: "provider-rule-repair",
      divergence: { part: "messages", messageIndex: 1, eventSeq: 5 }
    })
  })

  it("TTL expired: nothing diverged but the provider's TTL passed since the previous request", () => {
    const b = base()
    b.time += 6 * 60_000
    nextTurn(b)
    const ttl = (provider: string) => provider === "scripted" ? 5 * 60_000 : undefined
    const a = last(b, ttl)
    expect(a.cause).toBe("ttl-expired")
    expect(a.divergence).toBeUndefined()
    expect(last(b)).not.toHaveProperty("cause")
    expect(CacheAttribution.defaultTtlMs("anthropic")).toBe(300_000)
  })

  it("messageSeqs names the event of every projected message, in order (as Projection derives them)", () => {
    const b = base()
    b.assistant(1, 3, "") // an empty assistant message projects to nothing
    b.push("steering/message", { turn: 1, content: [{ type: "text", text: "steer" }], source: { kind: "user" } }, { surfaceOp: "append" })
    const nodes = Surface.foldSurface(b.events).nodes
    const seqs = CacheAttribution.messageSeqs(nodes)
    expect(seqs).toHaveLength(Projection.deriveMessages(nodes).length)
    expect(seqs).toEqual(nodes.filter((n) => Projection.deriveEventMessage(n) !== undefined).map((n) => n.seq))
  })
})
