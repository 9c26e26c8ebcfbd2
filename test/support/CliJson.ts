/**
 * The JSON lines of `docs/cli-json.md` as schemas, for the spawned-CLI tests that validate them.
 */
import * as Schema from "effect/Schema"

/** The `init` line of docs/cli-json.md. */
export const InitLine = Schema.Struct({
  type: Schema.Literal("init"),
  session_id: Schema.String,
  cwd: Schema.String,
  provider: Schema.String,
  model: Schema.String,
  tools: Schema.Array(Schema.String),
  version: Schema.String
})

/** A non-negative integer count. */
export const Count = Schema.Number.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0))

/** The `result` line of docs/cli-json.md. */
export const ResultLine = Schema.Struct({
  type: Schema.Literal("result"),
  session_id: Schema.String,
  subtype: Schema.Literals(["success", "error", "cancelled"]),
  result: Schema.String,
  usage: Schema.Struct({
    inputTokens: Count,
    outputTokens: Count,
    cacheReadTokens: Schema.optional(Count),
    cacheWriteTokens: Schema.optional(Count),
    reasoningTokens: Schema.optional(Count)
  }),
  duration_ms: Count,
  num_steps: Count,
  cost: Schema.NullOr(Schema.Number),
  cache: Schema.Struct({ hit_rate: Schema.NullOr(Schema.Number), saved: Schema.NullOr(Schema.Number) }),
  turn_end_reason: Schema.NullOr(Schema.StructWithRest(Schema.Struct({ kind: Schema.String }), [Schema.Record(Schema.String, Schema.Unknown)])),
  error: Schema.optional(Schema.String)
})
