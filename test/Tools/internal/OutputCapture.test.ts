import { describe, expect, it } from "@effect/vitest"
import { OutputCapture } from "../../../src/Tools/internal/OutputCapture.js"

const enc = (s: string) => new TextEncoder().encode(s)

describe("OutputCapture", () => {
  it("keeps everything under the cap", () => {
    const c = new OutputCapture(8, 8)
    c.push(enc("hello "))
    c.push(enc("world"))
    expect(c.truncated).toBe(false)
    expect(c.render()).toBe("hello world")
  })

  it("keeps head and tail with a notice, cutting on UTF-8 boundaries", () => {
    const c = new OutputCapture(5, 5)
    for (const ch of "ééééééééééééé€€€") c.push(enc(ch))
    expect(c.truncated).toBe(true)
    const text = c.render()
    expect(text).not.toContain("\uFFFD")
    expect(text.startsWith("éé\n\n[... ")).toBe(true)
    expect(text.endsWith(" bytes of output omitted ...]\n\n€")).toBe(true)
    expect(c.total).toBe(13 * 2 + 3 * 3)
    const omitted = Number(/\[\.\.\. (\d+) bytes/.exec(text)?.[1])
    expect(omitted).toBe(c.total - 4 - 3)
  })

  it("compacts a long tail without losing its end", () => {
    const c = new OutputCapture(4, 6)
    for (let i = 0; i < 1000; i++) c.push(enc(`${i % 10}`))
    expect(c.render()).toBe("0123\n\n[... 990 bytes of output omitted ...]\n\n456789")
  })
})
