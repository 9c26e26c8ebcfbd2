/**
 * `harness models [--json]`: the models the built-in catalog knows (`Llm/ModelCatalog`), with
 * their provider, context window, output limit and prices per million tokens when known; the
 * model each provider uses by default is marked. Any other model id still works with `--model`
 * (it runs on the default context window, K-1).
 *
 * @since 0.1.0
 */
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import * as ModelCatalog from "../../Llm/ModelCatalog.js"
import * as Output from "../Output.js"
import * as CommandDoc from "../CommandDoc.js"
import * as ProviderChoice from "../ProviderChoice.js"

const isDefault = (entry: ModelCatalog.Entry): boolean =>
  entry.provider === "scripted"
    ? entry.model === "demo"
    : (ProviderChoice.specs as Readonly<Record<string, ProviderChoice.Spec>>)[entry.provider]?.defaultModel === entry.model

/**
 * One model as `--json` prints it (one JSON line per model).
 *
 * @since 0.1.0
 * @category utils
 */
export const jsonOf = (entry: ModelCatalog.Entry) => ({
  provider: entry.provider,
  model: entry.model,
  context_window: entry.contextWindow,
  max_output_tokens: entry.maxOutputTokens,
  default: isDefault(entry),
  ...(entry.pricing === undefined ? {} : {
    pricing: {
      input_per_mtok: entry.pricing.inputPerMTok,
      output_per_mtok: entry.pricing.outputPerMTok,
      ...(entry.pricing.cacheReadPerMTok === undefined ? {} : { cache_read_per_mtok: entry.pricing.cacheReadPerMTok }),
      ...(entry.pricing.cacheWritePerMTok === undefined ? {} : { cache_write_per_mtok: entry.pricing.cacheWritePerMTok })
    }
  })
})

const tokens = (n: number): string => n >= 1_000_000 ? `${(n / 1_000_000).toFixed(2).replace(/\.?0+$/, "")}M` : `${Math.round(n / 1000)}K`
const price = (n: number | undefined): string => n === undefined ? "-" : `$${n}`

/**
 * The table `harness models` prints: a header, then one row per model.
 *
 * @since 0.1.0
 * @category utils
 */
export const table = (entries: ReadonlyArray<ModelCatalog.Entry>): string => {
  const rows = [
    ["PROVIDER", "MODEL", "CONTEXT", "MAX OUT", "IN $/MTOK", "OUT $/MTOK", "CACHE READ", ""],
    ...entries.map((e) => [
      e.provider,
      e.model,
      tokens(e.contextWindow),
      tokens(e.maxOutputTokens),
      price(e.pricing?.inputPerMTok),
      price(e.pricing?.outputPerMTok),
      price(e.pricing?.cacheReadPerMTok),
      isDefault(e) ? "(default)" : ""
    ])
  ]
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)))
  return rows.map((r) => r.map((cell, i) => cell.padEnd(widths[i]!)).join("  ").trimEnd()).join("\n")
}

/**
 * The `models` command.
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make(
  "models",
  { json: CommandDoc.boolean("json").pipe(Flag.withDescription("one JSON line per model")) },
  ({ json }) =>
    Effect.sync(() => {
      if (json) {
        for (const entry of ModelCatalog.builtIn) Output.processSinks.stdout(`${JSON.stringify(jsonOf(entry))}\n`)
      } else {
        Output.terminalSinks.stdout(`${table(ModelCatalog.builtIn)}\n`)
        Output.processSinks.stderr(`other model ids work too with --model (on a default ${tokens(ModelCatalog.DEFAULT_CONTEXT_WINDOW)} context window)\n`)
      }
    })
).pipe(Command.withDescription("list the models of the built-in catalog (context window, prices)"))
