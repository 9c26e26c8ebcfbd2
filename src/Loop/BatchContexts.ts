/**
 * The batch context FIFO (L-19): while a tool batch runs, every committed result's
 * `additionalContexts` (model order) and every `inject()` (arrival order) is queued here; when the
 * batch settles (normally, aborted, or interrupted by disposal) the scheduler drains it as
 * `context/message`s after ALL results.
 *
 * Contract for the loop (`inject` while a batch executes):
 * - `offer` validates and freezes a detached copy (lossless JSON, V-11) and returns `true` when it
 *   was queued, `false` once the FIFO is closed (the batch already drained): then append the
 *   context yourself, it still lands after every result.
 * - `drain` appends queued contexts one by one in FIFO order, INCLUDING contexts offered while it
 *   drains (e.g. from a session observer), and closes the FIFO only when it is empty, atomically.
 *   So arrival order is kept and `offer` never blocks (no deadlock with observers).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Json from "../Llm/Json.js"
import type { HookContext } from "./HookContext.js"

interface State {
  readonly open: boolean
  readonly queue: ReadonlyArray<HookContext>
}

/**
 * A FIFO of contexts for one batch.
 *
 * @since 0.1.0
 * @category models
 */
export interface BatchContexts {
  readonly state: Ref.Ref<State>
}

/**
 * An open, empty FIFO.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<BatchContexts> = Effect.map(
  Ref.make<State>({ open: true, queue: [] }),
  (state) => ({ state })
)

/**
 * A detached, frozen copy of a context (only `content`, `source`, `meta`), or why it is not JSON.
 *
 * @since 0.1.0
 * @category utils
 */
export const snapshot = (context: HookContext): Result.Result<HookContext, Json.JsonError> => {
  const plain = context.meta === undefined
    ? { content: context.content, source: context.source }
    : { content: context.content, source: context.source, meta: context.meta }
  return Json.snapshotOf<HookContext>(plain)
}

/**
 * Queues a frozen copy; `false` when the FIFO is closed. Fails when not lossless JSON.
 *
 * @since 0.1.0
 * @category combinators
 */
export const offer = (self: BatchContexts, context: HookContext): Effect.Effect<boolean, Json.JsonError> =>
  Effect.flatMap(Effect.suspend(() => Effect.fromResult(snapshot(context))), (frozen) => offerFrozen(self, frozen))

/**
 * Queues an already validated, frozen context as-is; `false` when closed.
 *
 * @since 0.1.0
 * @category combinators
 */
export const offerFrozen = (self: BatchContexts, context: HookContext): Effect.Effect<boolean> =>
  Ref.modify(self.state, (s) => (s.open ? [true, { open: true, queue: [...s.queue, context] }] : [false, s]))

/**
 * `true` while the FIFO accepts contexts.
 *
 * @since 0.1.0
 * @category accessors
 */
export const isOpen = (self: BatchContexts): Effect.Effect<boolean> => Effect.map(Ref.get(self.state), (s) => s.open)

/**
 * The queued contexts (not removed).
 *
 * @since 0.1.0
 * @category accessors
 */
export const pending = (self: BatchContexts): Effect.Effect<ReadonlyArray<HookContext>> =>
  Effect.map(Ref.get(self.state), (s) => s.queue)

/**
 * Removes and returns the head, or closes the FIFO when it is empty (atomically).
 *
 * @since 0.1.0
 * @category combinators
 */
export const takeOrClose = (self: BatchContexts): Effect.Effect<Option.Option<HookContext>> =>
  Ref.modify(self.state, (s): readonly [Option.Option<HookContext>, State] => {
    const [head, ...rest] = s.queue
    return head === undefined ? [Option.none(), { open: false, queue: [] }] : [Option.some(head), { open: s.open, queue: rest }]
  })

/**
 * Hands every queued context to `append` in FIFO order (including contexts offered meanwhile),
 * then closes the FIFO. Stops at the first failure (the rest stay queued).
 *
 * @since 0.1.0
 * @category combinators
 */
export const drain = <E, R>(
  self: BatchContexts,
  append: (context: HookContext) => Effect.Effect<void, E, R>
): Effect.Effect<void, E, R> =>
  Effect.flatMap(
    takeOrClose(self),
    Option.match({
      onNone: () => Effect.void,
      onSome: (context) => Effect.andThen(append(context), drain(self, append))
    })
  )
