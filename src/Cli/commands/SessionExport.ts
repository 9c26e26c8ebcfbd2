/**
 * `harness sessions export <id> [--format html|atif|jsonl] [--output FILE]`: a stored session as a
 * self-contained HTML page (default), an ATIF trajectory (one JSON document) or normalized JSON
 * Lines (`src/Export`). The export goes to stdout, or to `--output FILE` (written whole, then
 * renamed into place, so a reader never sees half a file). The session is read from a snapshot
 * (DEC-11: no lock, nothing written); a fork's ancestors are read for its lineage.
 *
 * @since 0.1.0
 */
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { identity } from "../../Adapter/HttpEdge.js"
import * as Atif from "../../Export/Atif.js"
import * as Html from "../../Export/Html.js"
import * as NormalizedJsonl from "../../Export/NormalizedJsonl.js"
import type * as Timeline from "../../Export/Timeline.js"
import { CliError } from "../CliError.js"
import * as CommonOptions from "../CommonOptions.js"
import { ExitCode } from "../ExitCode.js"
import * as Output from "../Output.js"
import type { Reader } from "./SessionStats.js"

/**
 * The export formats.
 *
 * @since 0.1.0
 * @category models
 */
export type Format = "html" | "atif" | "jsonl"

/**
 * The export formats, in help order.
 *
 * @since 0.1.0
 * @category constants
 */
export const formats: ReadonlyArray<Format> = ["html", "atif", "jsonl"]

/** how far a fork's lineage is followed */
const MAX_ANCESTORS = 32

/**
 * Renders an input in a format.
 *
 * @since 0.1.0
 * @category utils
 */
export const render = (format: Format, input: Timeline.Input): string => {
  switch (format) {
    case "html":
      return Html.render(input)
    case "atif":
      return `${JSON.stringify(Atif.trajectory(input), null, 2)}\n`
    case "jsonl":
      return NormalizedJsonl.render(input)
  }
}

const ancestorsOf = (read: Reader, store: "jsonl" | "sqlite", parent: string | undefined) =>
  Effect.gen(function*() {
    const out: Array<{ readonly id: string; readonly seedLength?: number }> = []
    let next = parent
    while (next !== undefined && out.length < MAX_ANCESTORS && !out.some((a) => a.id === next)) {
      const id: string = next
      // a parent that was deleted ends the lineage where it is known
      const loaded = yield* Effect.option(read(id, store))
      if (Option.isNone(loaded)) {
        out.push({ id })
        break
      }
      const header = loaded.value.header
      out.push({ id: header.id, ...(header.seedLength === undefined ? {} : { seedLength: header.seedLength }) })
      next = header.parentSession
    }
    return out
  })

const writeFile = (file: string, text: string): Effect.Effect<void, CliError> =>
  Effect.try({
    try: () => {
      const target = NodePath.resolve(file)
      const tmp = `${target}.${process.pid}.tmp`
      NodeFs.writeFileSync(tmp, text)
      NodeFs.renameSync(tmp, target)
    },
    catch: (e) => new CliError({ message: `error: cannot write ${file}: ${e instanceof Error ? e.message : String(e)}`, exitCode: ExitCode.Usage })
  })

/**
 * The `sessions export` command over a session reader.
 *
 * @since 0.1.0
 * @category commands
 */
export const make = (read: Reader) =>
  Command.make(
    "export",
    {
      store: CommonOptions.options.store,
      id: Argument.String("id").pipe(Argument.withDescription("session id, or any unique prefix of it")),
      format: Flag.Literals("format", formats).pipe(
        Flag.withDescription("html (a self-contained page; default) | atif (Harbor's ATIF-v1.6 trajectory) | jsonl (normalized JSON Lines)"),
        Flag.withDefault("html" as Format)
      ),
      output: Flag.String("output").pipe(
        Flag.withAlias("o"),
        Flag.withDescription("write the export to FILE instead of stdout"),
        Flag.optional
      )
    },
    ({ format, id, output, store }) =>
      Effect.gen(function*() {
        const loaded = yield* read(id, store)
        const ancestors = yield* ancestorsOf(read, store, loaded.header.parentSession)
        const text = render(format, { header: loaded.header, events: loaded.events, ancestors, version: identity.version })
        if (Option.isSome(output)) return yield* writeFile(output.value, text)
        yield* Effect.sync(() => Output.processSinks.stdout(text))
      })
  ).pipe(
    Command.withDescription(
      "export a session as a self-contained HTML page, an ATIF trajectory or normalized JSON Lines (each record names its log events)"
    )
  )
