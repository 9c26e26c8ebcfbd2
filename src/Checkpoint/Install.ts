/**
 * Wires a {@link Journal} into the loop: before each step it learns the session, turn and step;
 * after each step (and before the next, for a step cut off) the changes it saw are appended to the
 * session as one `checkpoint/manifest` event, with a one-line notice on stderr for each pre-image
 * that was too large to keep.
 *
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Hooks from "../Loop/Hooks.js"
import * as Journal from "./Journal.js"
import * as Manifest from "./Manifest.js"
import * as Store from "./Store.js"

/**
 * Registers the step hooks of `journal`. `notice` gets each notice line.
 *
 * @since 0.1.0
 * @category registration
 */
export const install = (
  journal: Journal.Service,
  notice: (line: string) => Effect.Effect<void>
): Effect.Effect<void, never, Hooks.LoopHooks | Scope.Scope> =>
  Effect.gen(function*() {
    const hooks = yield* Hooks.LoopHooks
    const flush = (input: Hooks.StepInput) =>
      Effect.gen(function*() {
        const data = yield* journal.take()
        if (data === undefined) return
        yield* input.agent.session.append({ type: Manifest.TYPE, data })
        for (const n of data.notices) yield* notice(`checkpoint: ${n}`)
      })
    yield* hooks.preStep.register((input) =>
      Effect.andThen(flush(input), journal.begin(input.agent.session.id, input.turn, input.step))
    )
    yield* hooks.postStep.register(flush)
  })

const positive = (name: string) =>
  Config.option(Config.Int(name)).pipe(Config.map(Option.filter((n) => n > 0)))

/**
 * The environment's settings: `EFFECT_HARNESS_CHECKPOINTS=off` turns the journal off;
 * `EFFECT_HARNESS_CHECKPOINT_MAX_FILE_BYTES` and `EFFECT_HARNESS_CHECKPOINT_MAX_BYTES` set the
 * bounds (positive integers; anything else keeps the defaults).
 *
 * @since 0.1.0
 * @category configuration
 */
export const fromEnv: Config.Config<{ readonly enabled: boolean; readonly bounds: Store.Bounds }> = Config.all({
  mode: Config.option(Config.String("EFFECT_HARNESS_CHECKPOINTS")),
  maxFile: positive("EFFECT_HARNESS_CHECKPOINT_MAX_FILE_BYTES"),
  maxTotal: positive("EFFECT_HARNESS_CHECKPOINT_MAX_BYTES")
}).pipe(Config.map(({ maxFile, maxTotal, mode }) => ({
  enabled: Option.getOrUndefined(mode)?.trim().toLowerCase() !== "off",
  bounds: {
    maxFileBytes: Option.getOrElse(maxFile, () => Store.DEFAULT_MAX_FILE_BYTES),
    maxTotalBytes: Option.getOrElse(maxTotal, () => Store.DEFAULT_MAX_TOTAL_BYTES)
  }
})))

/**
 * A journal for `options` provided to the tools (as {@link Journal.Journal}) with its hooks
 * installed; the bounds and the off switch come from {@link fromEnv} unless `options.bounds` is
 * given (an unreadable setting keeps the defaults).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Journal.Options,
  notice: (line: string) => Effect.Effect<void>
): Layer.Layer<never, never, Hooks.LoopHooks> =>
  Layer.unwrap(Effect.gen(function*() {
    const env = yield* fromEnv.pipe(Effect.orElseSucceed(() => ({ enabled: true, bounds: Store.defaultBounds })))
    if (!env.enabled) return Layer.empty
    const journal = yield* Journal.make({ ...options, bounds: options.bounds ?? env.bounds })
    yield* install(journal, notice)
    return Layer.succeed(Journal.Journal, journal)
  }))
