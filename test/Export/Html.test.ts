// vitest project: integration
/**
 * The HTML export (issue 35): self-contained, every log string escaped, thinking collapsible, tool
 * calls with arguments, results and diffs, usage and cost, fork lineage; loaded offline in headless
 * Chromium with zero console errors and zero network requests, and a screenshot taken.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import * as Html from "../../src/Export/Html.js"
import * as Chromium from "../support/Chromium.js"
import { exportEvents, exportHeader, hostile } from "../support/exportLog.js"

const input = { header: exportHeader, events: exportEvents(), ancestors: [{ id: "harness-session-parent" }, { id: "harness-session-root" }], version: "0.1.0" }

describe("Export/Html", () => {
  const page = Html.render(input)

  it("escapes every string from the log: no markup, script or URL of the log is live", () => {
    for (const s of Object.values(hostile)) {
      expect(page).toContain(Html.escape(s))
    }
    expect(page).not.toContain("<script>window.__pwned")
    expect(page).not.toMatch(/<(img|iframe|link|a)\b/i)
    // one script only: the page's own
    expect(page.match(/<script>/g)).toHaveLength(1)
    expect(Html.escape(`<&>"'`)).toBe("&lt;&amp;&gt;&quot;&#39;")
  })

  it("shows thinking collapsed, tool calls with arguments, results and diffs, usage, cost and lineage", () => {
    expect(page).toMatch(/<details class="thinking"><summary>thinking<\/summary>/)
    expect(page).toContain(`<span class="del">- ${Html.escape(hostile.oldString)}</span>`)
    expect(page).toContain(`<span class="add">+ ${Html.escape(hostile.newString)}</span>`)
    expect(page).toContain(`$ ${Html.escape(hostile.command)}`)
    expect(page).toContain("✗ error EXIT_1")
    expect(page).toContain("100 in · 20 out · 50 cache read · $0.001200")
    expect(page).toContain("$0.002000")
    expect(page).toContain("fork lineage: <code>harness-session-export-1</code> ← <code>harness-session-parent</code> ← <code>harness-session-root</code>")
    expect(page).toContain("turn 2 cancelled: cancelled by the user")
    expect(page).toContain("user (steering)")
    // blocks name their log events
    expect(page).toMatch(/#4–10/)
  })

  it.live("[chromium] loads offline: zero console errors, zero network requests, a screenshot; the buttons work", () =>
    Effect.gen(function*() {
      if (Chromium.chromiumAbsent("the HTML export's browser test")) return
      const dir = mkdtempSync(join(tmpdir(), "harness-export-html-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
      const file = join(dir, "session.html")
      writeFileSync(file, page)
      const report = yield* Chromium.load(pathToFileURL(file).href, [
        "window.__pwned === undefined",
        "document.querySelectorAll('details').length",
        "(document.getElementById('expand').click(), [...document.querySelectorAll('details')].every(d => d.open))",
        "(document.getElementById('collapse').click(), [...document.querySelectorAll('details')].some(d => d.open))",
        "document.body.innerText.includes(" + JSON.stringify(hostile.prompt) + ")",
        "document.querySelectorAll('img,iframe,link,a,style').length"
      ])
      expect(report.errors).toEqual([])
      expect(report.requests).toEqual([])
      expect(report.values).toEqual([true, 4, true, false, true, 1])
      // a PNG of the rendered page
      expect(report.screenshot.subarray(1, 4).toString("latin1")).toBe("PNG")
      expect(report.screenshot.length).toBeGreaterThan(5_000)
      const shot = join(dir, "session.png")
      writeFileSync(shot, report.screenshot)
      expect(statSync(shot).size).toBe(report.screenshot.length)
    }), 60_000)
})
