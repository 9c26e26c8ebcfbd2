/**
 * The ATIF export (issue 35): valid against the vendored ATIF-v1.6 JSON Schema (ajv) and Harbor's
 * validator rules; every step traceable to its log events.
 */
import { describe, expect, it } from "@effect/vitest"
import { Ajv } from "ajv"
import { readFileSync } from "node:fs"
import * as Atif from "../../src/Export/Atif.js"
import { exportEvents, exportHeader, hostile } from "../support/exportLog.js"
import { header } from "../support/sessionLog.js"

const schema = JSON.parse(readFileSync(new URL("../../docs/reference/atif/ATIF-v1.6.schema.json", import.meta.url), "utf8")) as object
const ajv = new Ajv({ strict: false, allErrors: true })
// Harbor parses timestamps as ISO 8601 date-times
ajv.addFormat("date-time", (s: string) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(s))
const validate = ajv.compile(schema)

describe("Export/Atif", () => {
  const events = exportEvents()
  const trajectory = Atif.trajectory({ header: exportHeader, events, version: "0.1.0" })
  const json = JSON.parse(JSON.stringify(trajectory)) as { readonly steps: ReadonlyArray<Record<string, unknown>> }

  it("validates against the vendored ATIF-v1.6 schema and Harbor's semantic rules", () => {
    expect(validate(json), JSON.stringify(validate.errors)).toBe(true)
    expect(Atif.check(json)).toEqual([])
    expect(trajectory.schema_version).toBe("ATIF-v1.6")
  })

  it("maps messages, reasoning, tool calls, observations and metrics", () => {
    expect(trajectory.steps.map((s) => s.source)).toEqual(["system", "user", "agent", "agent", "user", "user", "agent"])
    const agent = trajectory.steps[2]!
    expect(agent).toMatchObject({
      message: hostile.text,
      reasoning_content: hostile.reasoning,
      model_name: "claude-test",
      tool_calls: [
        { tool_call_id: "call-edit", function_name: "edit", arguments: { file_path: "src/a.ts", old_string: hostile.oldString } },
        { tool_call_id: "call-bash", function_name: "bash", arguments: { command: hostile.command } }
      ],
      observation: { results: [{ source_call_id: "call-edit", content: "edited src/a.ts" }, { source_call_id: "call-bash", content: hostile.bashError }] },
      metrics: { prompt_tokens: 150, completion_tokens: 20, cached_tokens: 50, cost_usd: 0.0012 },
      extra: { turn: 1, step: 1, failedCalls: ["call-bash"] }
    })
    expect(trajectory.final_metrics).toEqual({ total_prompt_tokens: 330, total_completion_tokens: 28, total_cached_tokens: 50, total_cost_usd: 0.002, total_steps: 7 })
    expect(trajectory.notes).toBe(hostile.title)
    expect(trajectory.extra).toMatchObject({ lineage: [{ id: "harness-session-export-1", seedLength: 2 }, { id: "harness-session-parent" }] })
  })

  it("every step names log events of its kind; the fork's seed is copied context", () => {
    for (const step of trajectory.steps) {
      const seqs = step.extra["seqs"] as ReadonlyArray<number>
      expect(seqs.length).toBeGreaterThan(0)
      const types = seqs.map((s) => events[s]!.type)
      if (step.source === "agent") {
        expect(types).toContain("assistant/message")
        for (const call of step.tool_calls ?? []) {
          expect(seqs.some((s) => events[s]!.type === "tool/call" && (events[s]!.data as { callId: string }).callId === call.tool_call_id)).toBe(true)
        }
      } else {
        expect(types.every((t) => ["user/message", "steering/message", "context/message"].includes(t))).toBe(true)
      }
    }
    expect(trajectory.steps[0]!.is_copied_context).toBe(true)
    expect(trajectory.steps[1]!.is_copied_context).toBeUndefined()
  })

  it("an empty session is still a valid trajectory; check reports broken rules", () => {
    const empty = JSON.parse(JSON.stringify(Atif.trajectory({ header: header("harness-session-empty"), events: [] })))
    expect(validate(empty), JSON.stringify(validate.errors)).toBe(true)
    expect(Atif.check({
      steps: [
        { step_id: 2, source: "user", message: "x", model_name: "m" },
        { step_id: 2, source: "agent", message: "", tool_calls: [], observation: { results: [{ source_call_id: "nope" }] } }
      ]
    })).toEqual([
      "steps[0].step_id is 2, expected 1",
      "steps[0].model_name is only allowed on agent steps",
      "steps[1].observation.results[0].source_call_id \"nope\" names no tool call of this step"
    ])
    // the schema rejects unknown fields (Harbor's models forbid extras)
    expect(validate({ ...empty, surprise: 1 })).toBe(false)
  })
})
