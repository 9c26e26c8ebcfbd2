import { describe, expect, it } from "@effect/vitest"
import { idOf, LineFraming } from "../../../src/Mcp/internal/LineFraming.js"

describe("LineFraming (issue 26)", () => {
  it("frames lines across chunks and strips a trailing \\r", () => {
    const f = new LineFraming(100)
    expect(f.append(Buffer.from("{\"a\":"))).toEqual([])
    expect(f.append(Buffer.from("1}\r\n{\"b\":2}\n{\"c\""))).toEqual([
      { _tag: "Line", text: "{\"a\":1}" },
      { _tag: "Line", text: "{\"b\":2}" }
    ])
    expect(f.append(Buffer.from(":3}\n"))).toEqual([{ _tag: "Line", text: "{\"c\":3}" }])
  })

  it("skips a line over the limit without holding it, reports its size and id, and frames the next line", () => {
    const f = new LineFraming(64)
    const big = `{"result":{"text":"${"x".repeat(500)}"},"jsonrpc":"2.0","id":7}`
    const out = [...f.append(Buffer.from(big.slice(0, 200))), ...f.append(Buffer.from(`${big.slice(200)}\n{"ok":1}\n`))]
    expect(out).toEqual([{ _tag: "TooLong", bytes: big.length, id: 7 }, { _tag: "Line", text: "{\"ok\":1}" }])
  })

  it("reads the id first (after jsonrpc) or last, never from inside the payload", () => {
    expect(idOf("{\"jsonrpc\":\"2.0\",\"id\":\"a-1\",\"result\":{", "")).toBe("a-1")
    expect(idOf("{\"id\":3,\"result\"", "")).toBe(3)
    expect(idOf("{\"result\":{\"id\":9", "\"}},\"jsonrpc\":\"2.0\",\"id\":4}")).toBe(4)
    expect(idOf("{\"result\":{\"id\":9", "\"x\"}}")).toBeUndefined()
  })
})
