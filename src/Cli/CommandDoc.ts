/**
 * What every command of the tree accepts, read from the `effect/cli` commands themselves (so it
 * never drifts from their flags and arguments): the names, the values an option takes, whether it
 * is optional or repeatable, its description. `StrictArgs` checks the command line against it and
 * the CLI reference (`scripts/CliReference.ts`) is generated from it.
 *
 * `effect/cli` keeps a command's flags and arguments in a `config` the public type does not name:
 * it is read here through runtime checks ({@link isParam}-guarded), the way the Effect 3 port read
 * the descriptor's union. The parameters themselves are walked through their public `Param` shapes.
 * A flag's settings-file fallback is not visible in its parameter tree, so {@link fromSettings}
 * records it.
 *
 * @since 0.1.0
 */
import type * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Param from "effect/cli/Param"
import type * as Config from "effect/Config"
import * as Option from "effect/Option"
import * as Defaults from "./Defaults.js"

/**
 * One option of a command.
 *
 * @since 0.1.0
 * @category models
 */
export interface FlagDoc {
  /** `--name` */
  readonly name: string
  /** `-x` */
  readonly aliases: ReadonlyArray<string>
  /** `undefined` for a flag without a value; else `text`, `integer` or the choices (`a | b`) */
  readonly value: string | undefined
  readonly optional: boolean
  readonly repeated: boolean
  readonly description: string
  /** the settings files may set its default ({@link fromSettings}) */
  readonly fromSettings: boolean
}

/**
 * One positional argument of a command.
 *
 * @since 0.1.0
 * @category models
 */
export interface ArgDoc {
  readonly name: string
  readonly description: string
  readonly optional: boolean
  readonly variadic: boolean
}

/**
 * A command and its subcommands.
 *
 * @since 0.1.0
 * @category models
 */
export interface CommandDoc {
  readonly name: string
  readonly description: string
  readonly flags: ReadonlyArray<FlagDoc>
  readonly args: ReadonlyArray<ArgDoc>
  readonly subcommands: ReadonlyArray<CommandDoc>
}

const settingsBacked = new WeakSet<object>()

/**
 * `Flag.withFallbackConfig` on a settings-file default (`Defaults.config`), recorded so the help
 * and the reference can say so.
 *
 * @since 0.1.0
 * @category combinators
 */
export const fromSettings = <B>(config: Config.Config<B>) => <A>(self: Flag.Flag<A>): Flag.Flag<A | B> => {
  const flag = Flag.withFallbackConfig(self, Defaults.config(config))
  settingsBacked.add(flag)
  return flag
}

/**
 * A flag without a value, `false` when absent (Effect 3's `Options.boolean`: no `--no-` form).
 *
 * @since 0.1.0
 * @category constructors
 */
export const boolean = (name: string): Flag.Flag<boolean> =>
  Flag.Boolean(name).pipe(Flag.withoutNegation, Flag.withDefault(false))

interface Shape {
  readonly value: string | undefined
  readonly optional: boolean
  readonly repeated: boolean
  readonly fromSettings: boolean
}

const inner = (param: Param.Any): Param.Any | undefined =>
  "param" in param && Param.isParam(param.param) ? param.param : undefined

const choiceKeys = (primitive: unknown): ReadonlyArray<string> | undefined =>
  typeof primitive === "object" && primitive !== null && "choiceKeys" in primitive && Array.isArray(primitive.choiceKeys)
    ? primitive.choiceKeys.map(String)
    : undefined

const valueOf = (single: Param.Single<Param.ParamKind, unknown>): string | undefined => {
  switch (single.primitiveType._tag) {
    case "Boolean":
      return undefined
    case "Int":
      return "integer"
    case "Choice":
      return (choiceKeys(single.primitiveType) ?? []).join(" | ")
    default:
      return "text"
  }
}

const walk = (param: Param.Any, shape: Omit<Shape, "value">): { readonly single: Param.Single<Param.ParamKind, unknown>; readonly shape: Shape } | undefined => {
  const marked = { ...shape, fromSettings: shape.fromSettings || settingsBacked.has(param) }
  if (Param.isSingle(param)) {
    const value = valueOf(param)
    return { single: param, shape: { ...marked, value, optional: marked.optional || value === undefined } }
  }
  const next = inner(param)
  if (next === undefined) return undefined
  switch (param._tag) {
    case "Optional":
      return walk(next, { ...marked, optional: true })
    case "Variadic":
      return walk(next, { ...marked, repeated: true })
    default:
      return walk(next, marked)
  }
}

const dashed = (name: string): string => name.length === 1 ? `-${name}` : `--${name}`

const flagDoc = (param: Param.Any): FlagDoc | undefined => {
  const found = walk(param, { optional: false, repeated: false, fromSettings: false })
  if (found === undefined) return undefined
  const { shape, single } = found
  return {
    name: `--${single.name}`,
    aliases: single.aliases.map(dashed),
    value: shape.value,
    optional: shape.optional && !shape.repeated,
    repeated: shape.repeated,
    description: Option.getOrElse(single.description, () => ""),
    fromSettings: shape.fromSettings
  }
}

const argDoc = (param: Param.Any): ArgDoc | undefined => {
  const found = walk(param, { optional: false, repeated: false, fromSettings: false })
  if (found === undefined) return undefined
  return {
    name: found.single.name,
    description: Option.getOrElse(found.single.description, () => ""),
    optional: found.shape.optional,
    variadic: found.shape.repeated
  }
}

const params = (config: unknown, key: "flags" | "arguments"): ReadonlyArray<Param.Any> => {
  const list: unknown = typeof config === "object" && config !== null ? Reflect.get(config, key) : undefined
  return Array.isArray(list) ? list.filter((p): p is Param.Any => Param.isParam(p)) : []
}

const defined = <A>(a: A | undefined): a is A => a !== undefined

/**
 * The documentation of a command tree.
 *
 * @since 0.1.0
 * @category constructors
 */
export const of = (command: Command.Command.Any): CommandDoc => {
  const config: unknown = "config" in command ? command.config : undefined
  return {
    name: command.name,
    description: command.description ?? "",
    flags: params(config, "flags").map(flagDoc).filter(defined),
    args: params(config, "arguments").map(argDoc).filter(defined),
    subcommands: command.subcommands.flatMap((group) => group.commands).map(of)
  }
}

/**
 * A flag as v3-style usage prints it: `--store jsonl | sqlite`, `(-y, --yes)`, `--mcp-config text...`.
 *
 * @since 0.1.0
 * @category utils
 */
export const term = (flag: FlagDoc): string => {
  const names = flag.aliases.length === 0 ? flag.name : `(${[...flag.aliases, flag.name].join(", ")})`
  const valued = flag.value === undefined ? names : `${names} ${flag.value}`
  return flag.repeated ? `${valued}...` : valued
}

/**
 * A command's usage line after its name: its flags (optional ones in brackets), then its arguments.
 *
 * @since 0.1.0
 * @category utils
 */
export const usage = (command: CommandDoc): string =>
  [
    ...command.flags.map((flag) => flag.optional ? `[${term(flag)}]` : term(flag)),
    ...command.args.map((arg) => {
      const name = arg.variadic ? `<${arg.name}>...` : `<${arg.name}>`
      return arg.optional ? `[${name}]` : name
    })
  ].join(" ")
