/**
 * Small helpers for loop tests: waiting for a logged event, tools, content shorthands.
 */
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import * as Schema from "effect/Schema"
import * as ContentBlock from "../../src/Llm/ContentBlock.js"
import * as Memory from "../../src/Session/persistence/Memory.js"
import type { Session } from "../../src/Session/Session.js"
import * as SessionError from "../../src/Session/SessionError.js"
import * as SessionPersistence from "../../src/Session/SessionPersistence.js"
import type { SessionEvent } from "../../src/Session/SessionEvent.js"
import * as Tool from "../../src/Loop/Tool.js"

/** Resolves with the first event (already logged or future) satisfying `predicate`. */
export const whenEvent = (
  session: Session,
  predicate: (event: SessionEvent) => boolean
): Effect.Effect<SessionEvent, SessionError.SessionError, Scope.Scope> =>
  Effect.gen(function*() {
    const found = yield* Deferred.make<SessionEvent>()
    yield* session.observe((event) => (predicate(event) ? Deferred.succeed(found, event) : Effect.void))
    const existing = (yield* session.events).find(predicate)
    if (existing !== undefined) return existing
    return yield* Deferred.await(found)
  })

/** `[text(s)]`. */
export const text = (s: string): ReadonlyArray<ContentBlock.ContentBlock> => [ContentBlock.text(s)]

/** The `echo` tool of the acceptance cases: `echo: <text>`. */
export const echo = Tool.make({
  name: "echo",
  description: "Echoes its text",
  parameters: Schema.Struct({ text: Schema.String }),
  isConcurrencySafe: () => true,
  execute: (args: { readonly text: string }) => Effect.succeed([ContentBlock.text(`echo: ${args.text}`)])
})

/** A tool named `name` whose body is `body`. */
export const tool = <E, R>(
  name: string,
  body: (args: unknown, context: Tool.ToolRunContext) => Effect.Effect<Tool.ToolOutput, E, R>,
  options: { readonly parallel?: boolean } = {}
): Tool.Tool<R> =>
  Tool.raw({
    name,
    description: `the ${name} tool`,
    parameters: { type: "object", properties: {} },
    ...(options.parallel === true ? { isConcurrencySafe: () => true } : {}),
    execute: body
  })

/**
 * A controllable persistence backend over the in-memory one, acting at the flush checkpoint
 * (`sync`, which the store runs at every flush: turn end, idle injection, disposal; DEC-11):
 * `failNext(n)` makes the next n syncs fail with `IO`; `holdNext(n)` makes the next n syncs wait
 * until the test releases them (`held` yields one release handle per held sync, in order).
 */
export interface Gate {
  readonly layer: Layer.Layer<SessionPersistence.SessionPersistence>
  readonly failNext: (n: number) => Effect.Effect<void>
  readonly holdNext: (n: number) => Effect.Effect<void>
  /** waits for the next held append; completing the Deferred lets it proceed */
  readonly held: Effect.Effect<Deferred.Deferred<void>>
  /** number of syncs that reached the backend (including failed ones) */
  readonly appends: Effect.Effect<number>
}

export const makeGate: Effect.Effect<Gate> = Effect.gen(function*() {
  const failures = yield* Ref.make(0)
  const holds = yield* Ref.make(0)
  const count = yield* Ref.make(0)
  const held = yield* Queue.unbounded<Deferred.Deferred<void>>()
  const layer = Layer.effect(
    SessionPersistence.SessionPersistence,
    Effect.map(Memory.make(), (inner): SessionPersistence.Service => ({
      ...inner,
      sync: (id) =>
        Effect.gen(function*() {
          yield* Ref.update(count, (n) => n + 1)
          const fail = yield* Ref.modify(failures, (n) => [n > 0, n > 0 ? n - 1 : 0] as const)
          if (fail) return yield* Effect.fail(SessionError.make("IO", "gate: injected flush failure"))
          const hold = yield* Ref.modify(holds, (n) => [n > 0, n > 0 ? n - 1 : 0] as const)
          if (hold) {
            const release = yield* Deferred.make<void>()
            yield* Queue.offer(held, release)
            yield* Deferred.await(release)
          }
          return yield* inner.sync(id)
        })
    }))
  )
  const gate: Gate = {
    layer,
    failNext: (n) => Ref.set(failures, n),
    holdNext: (n) => Ref.set(holds, n),
    held: Queue.take(held),
    appends: Ref.get(count)
  }
  return gate
})

/** A tagged failure for listeners and tools that must fail in tests. */
export class Boom extends Data.TaggedError("Boom")<{ readonly message: string }> {}

/** `Effect.fail(new Boom({message}))`. */
export const boom = (message: string) => Effect.fail(new Boom({ message }))
