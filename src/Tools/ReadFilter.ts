/**
 * The paths the read-only tools (`read`, `ls`, `glob`, `grep`) must not show. The CLI fills it
 * from the deny rules (`Read(./secrets/**)`, see `Policy/Permissions`), so a listing or a
 * directory walk never prints a name or content that a rule hides, however it was reached: with
 * a path, without one, or through a symbolic link to the directory (the tools see the real,
 * resolved paths). Without the service nothing is hidden.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

/**
 * The filter.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** `true` when the real workspace-relative path (`/`-separated) must not be shown */
  readonly hidden: (relative: string) => boolean
}

/**
 * The filter tag.
 *
 * @since 0.1.0
 * @category tags
 */
export class ReadFilter extends Context.Service<ReadFilter, Service>()("effect-harness/Tools/ReadFilter") {}

/**
 * The filter in context, or one that hides nothing.
 *
 * @since 0.1.0
 * @category accessors
 */
export const hidden: Effect.Effect<(relative: string) => boolean> = Effect.map(
  Effect.serviceOption(ReadFilter),
  Option.match({ onNone: () => () => false, onSome: (filter) => filter.hidden })
)

/**
 * The filter of a predicate.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (isHidden: (relative: string) => boolean): Layer.Layer<ReadFilter> =>
  Layer.succeed(ReadFilter, ReadFilter.of({ hidden: isHidden }))

/**
 * The error of a read of a hidden path.
 *
 * @since 0.1.0
 * @category utils
 */
export const hiddenMessage = (relative: string): string => `${relative} is hidden by a permission rule (deny Read)`
