/**
 * The bash parser behind the permission rules: tree-sitter's bash grammar, compiled to
 * WebAssembly (`@vscode/tree-sitter-wasm`, one package with the runtime and the grammar, no native
 * build). The package is required at run time, not bundled, and its wasm files are read from it
 * (the bundled CLI resolves it from its own location, like its other external dependency); the
 * grammar is loaded once per process, on the first bash decision.
 *
 * When the parser cannot be loaded, every command is unknowable (so an allow rule never covers
 * it and a deny rule turns it into a question) and the cause is said once on stderr.
 *
 * @since 0.1.0
 */
import type TreeSitterModule from "@vscode/tree-sitter-wasm"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as NodeFs from "node:fs"
import { createRequire } from "node:module"
import * as NodePath from "node:path"
import * as Notice from "../Tools/Notice.js"
import * as ShellCommand from "./ShellCommand.js"

/**
 * The parser could not be loaded.
 *
 * @since 0.1.0
 * @category errors
 */
export class ShellParserError extends Schema.TaggedError<ShellParserError>()("ShellParserError", {
  code: Schema.Literal("SHELL_PARSER_UNAVAILABLE"),
  message: Schema.String
}) {}

/**
 * The parser service.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** what a bash command runs (see `ShellCommand`) */
  readonly analyze: (command: string) => Effect.Effect<ShellCommand.Analysis>
}

/**
 * The parser tag.
 *
 * @since 0.1.0
 * @category tags
 */
export class ShellParser extends Context.Service<ShellParser, Service>()("effect-harness/Policy/ShellParser") {}

const resolvePackageFile = createRequire(import.meta.url)

// required at run time, not bundled (the runtime finds its own files next to it), and only on the
// first bash decision, so commands that never parse a shell command do not pay for loading it
let required: typeof TreeSitterModule | undefined
const treeSitter = (): typeof TreeSitterModule => required ??= resolvePackageFile("@vscode/tree-sitter-wasm")

// the wasm runtime is process-global: it is initialised once, whoever asks first
let loading: Promise<TreeSitterModule.Language> | undefined

const loadLanguage = (): Promise<TreeSitterModule.Language> =>
  loading ??= (async () => {
    const runtime = resolvePackageFile.resolve("@vscode/tree-sitter-wasm/wasm/tree-sitter.wasm")
    const grammar = resolvePackageFile.resolve("@vscode/tree-sitter-wasm/wasm/tree-sitter-bash.wasm")
    const TreeSitter = treeSitter()
    await TreeSitter.Parser.init({ locateFile: (file) => NodePath.join(NodePath.dirname(runtime), file) })
    return TreeSitter.Language.load(new Uint8Array(NodeFs.readFileSync(grammar)))
  })()

/**
 * Loads the bash grammar (once per process).
 *
 * @since 0.1.0
 * @category constructors
 */
export const load: Effect.Effect<TreeSitterModule.Language, ShellParserError> = Effect.tryPromise({
  try: loadLanguage,
  catch: (e) =>
    new ShellParserError({
      code: "SHELL_PARSER_UNAVAILABLE",
      message: `the shell parser could not be loaded (${e instanceof Error ? e.message : String(e)})`
    })
})

/**
 * A {@link ShellCommand.Parse} over a loaded grammar: one parser, its trees freed after use.
 *
 * @since 0.1.0
 * @category constructors
 */
export const parserOf = (language: TreeSitterModule.Language): ShellCommand.Parse => (text, use) => {
  const parser = new (treeSitter().Parser)()
  try {
    parser.setLanguage(language)
    const tree = parser.parse(text)
    if (tree === null) return undefined
    try {
      return use(tree.rootNode)
    } finally {
      tree.delete()
    }
  } finally {
    parser.delete()
  }
}

const unavailable = (reason: string): ShellCommand.Analysis => ({
  invocations: [],
  unknowable: [reason],
  opaque: [],
  writes: [],
  substitution: false
})

/**
 * Builds the service; the grammar is loaded on the first analysis.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Service> = Effect.gen(function*() {
  const notice = yield* Notice.Notice
  const language = yield* Effect.cached(
    load.pipe(
      Effect.tapError((e) => notice(e.message)),
      Effect.result
    )
  )
  return ShellParser.of({
    analyze: (command) =>
      Effect.map(language, (loaded) =>
        Result.isFailure(loaded)
          ? unavailable(loaded.failure.message)
          : ShellCommand.analyze(command, parserOf(loaded.success)))
  })
})

/**
 * The parser as a layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<ShellParser> = Layer.effect(ShellParser, make)
