/**
 * Output scrubbing (issue 16): every configured secret value that appears in a built-in tool's
 * result (its text blocks, or the message of its error) is replaced by {@link REDACTED} before the
 * result is logged or shown to the model; the number of replacements is recorded in the result's
 * `meta.redactions` (model-hidden, durable in the session log).
 *
 * The secrets come from {@link Secrets}: by default the values captured at start-up by
 * `SecretEnv` (provider keys and secret-looking variables).
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import type * as ContentBlock from "../../Llm/ContentBlock.js"
import type * as Json from "../../Llm/Json.js"
import type * as Tool from "../../Loop/Tool.js"
import * as SecretEnv from "../SecretEnv.js"
import * as ToolError from "../ToolError.js"

/**
 * The replacement text.
 *
 * @since 0.1.0
 * @category constants
 */
export const REDACTED = "<redacted>"

/**
 * The secret values to scrub (a getter: read at each call).
 *
 * @since 0.1.0
 * @category references
 */
export const Secrets: Context.Reference<SecretValues> = Context.Reference<SecretValues>(
  "effect-harness/Tools/Secrets",
  { defaultValue: () => ({ values: SecretEnv.secrets }) }
)

/**
 * The shape of {@link Secrets}.
 *
 * @since 0.1.0
 * @category models
 */
export interface SecretValues {
  readonly values: () => ReadonlyArray<Redacted.Redacted<string>>
}

/**
 * Replaces every occurrence of the secrets in `text`; returns the new text and the count.
 *
 * @since 0.1.0
 * @category utils
 */
export const scrubText = (text: string, secrets: ReadonlyArray<string>): { readonly text: string; readonly count: number } => {
  let out = text
  let count = 0
  for (const secret of secrets) {
    if (secret === "" || !out.includes(secret)) continue
    const parts = out.split(secret)
    count += parts.length - 1
    out = parts.join(REDACTED)
  }
  return { text: out, count }
}

const plain = (secrets: ReadonlyArray<Redacted.Redacted<string>>): Array<string> =>
  secrets.map(Redacted.value).filter((s) => s.length > 0).sort((a, b) => b.length - a.length)

const withRedactions = (meta: Json.Json | undefined, count: number): Json.Json => {
  if (meta === undefined) return { redactions: count }
  if (typeof meta === "object" && meta !== null && !Array.isArray(meta)) return { ...meta, redactions: count }
  return { value: meta, redactions: count }
}

/**
 * Scrubs a tool output; `meta.redactions` is set when something was replaced.
 *
 * @since 0.1.0
 * @category utils
 */
export const scrubOutput = (output: Tool.ToolOutput, secrets: ReadonlyArray<string>): Tool.ToolOutput => {
  const content = Array.isArray(output) ? output as ReadonlyArray<ContentBlock.ContentBlock> : (output as { readonly content: ReadonlyArray<ContentBlock.ContentBlock> }).content
  const meta = Array.isArray(output) ? undefined : (output as { readonly meta?: Json.Json }).meta
  let count = 0
  const scrubbed = content.map((block): ContentBlock.ContentBlock => {
    if (block.type !== "text") return block
    const r = scrubText(block.text, secrets)
    count += r.count
    return r.count === 0 ? block : { ...block, text: r.text }
  })
  if (count === 0) return output
  return { content: scrubbed, meta: withRedactions(meta, count) }
}

/**
 * The tool with its results and error messages scrubbed.
 *
 * @since 0.1.0
 * @category combinators
 */
export const wrap = <R>(tool: Tool.Tool<R>): Tool.Tool<R> => ({
  ...tool,
  execute: (args, context) =>
    Effect.gen(function*() {
      const secrets = plain((yield* Secrets).values())
      if (secrets.length === 0) return yield* tool.execute(args, context)
      return yield* tool.execute(args, context).pipe(
        Effect.map((output) => scrubOutput(output, secrets)),
        Effect.mapError((e) => {
          if (!(e instanceof ToolError.BuiltinToolError)) return e
          const r = scrubText(e.message, secrets)
          return r.count === 0 ? e : ToolError.make(e.code, r.text)
        })
      )
    })
})
