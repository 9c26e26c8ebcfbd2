/**
 * Internal: how the agent factory obtains its live session and flush checkpoint.
 *
 * TEMPORARY: until `SessionStore` lands this creates bare in-memory sessions with a no-op flush.
 *
 * @since 0.1.0
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Session from "../../Session/Session.js"
import type { SessionError } from "../../Session/SessionError.js"

export type Choice =
  | { readonly _tag: "New"; readonly id?: string; readonly cwd?: string }
  | { readonly _tag: "Auto"; readonly id: string; readonly cwd?: string }
  | { readonly _tag: "Resume"; readonly id: string }
  | { readonly _tag: "Fork"; readonly from: string; readonly boundary?: number; readonly id?: string }

export interface Acquired {
  readonly session: Session.Session
  readonly source: "startup" | "resume"
  readonly flush: Effect.Effect<void, SessionError>
}

export type Requirements = never

export interface Sessions {
  readonly acquire: (choice: Choice, label: string) => Effect.Effect<Acquired, SessionError, Scope.Scope>
}

export const make: Effect.Effect<Sessions, never, Requirements> = Effect.succeed({
  acquire: (choice, label) =>
    Effect.gen(function*() {
      const id = choice._tag === "Fork" ? choice.id : choice.id
      const cwd = choice._tag === "New" || choice._tag === "Auto" ? choice.cwd : undefined
      const session = yield* Session.make({
        id: id ?? `${label}-session-${crypto.randomUUID()}`,
        ...(cwd === undefined ? {} : { cwd })
      })
      return { session, source: "startup" as const, flush: Effect.void }
    })
})

export type Provided = never

export const layerMemory: Layer.Layer<never> = Layer.empty
