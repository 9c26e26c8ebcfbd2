/**
 * Internal: how the agent factory obtains its live session and its flush checkpoint, over the
 * `SessionStore` (L-7, D-7, D-12).
 *
 * - `New` → `SessionStore.create` (id `<label>-session-<uuid>` when none given); source `startup`.
 * - `Auto` (an explicit id) → resume when stored (`open`), else create; `resume` / `startup`.
 * - `Resume` → `open`: requires stored history (`SESSION_NOT_FOUND` otherwise); source `resume`.
 * - `Fork` → `SessionStore.fork`; source `startup`.
 *
 * @since 0.1.0
 * @internal
 */
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type * as Session from "../../Session/Session.js"
import type { SessionError } from "../../Session/SessionError.js"
import * as SessionStore from "../../Session/SessionStore.js"
import type { SessionChoice } from "../SessionChoice.js"

/**
 * Which session an agent runs over.
 *
 * @since 0.1.0
 * @category models
 */
export type Choice = SessionChoice

/**
 * A live session, how it was obtained (`session-start` source) and its flush checkpoint.
 *
 * @since 0.1.0
 * @category models
 */
export interface Acquired {
  readonly session: Session.Session
  readonly source: "startup" | "resume"
  readonly flush: Effect.Effect<void, SessionError>
}

/**
 * What the factory needs to obtain sessions.
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements = SessionStore.SessionStore

/**
 * What the in-memory test layer provides.
 *
 * @since 0.1.0
 * @category models
 */
export type Provided = SessionStore.SessionStore

/**
 * Obtains live sessions for agents.
 *
 * @since 0.1.0
 * @category models
 */
export interface Sessions {
  readonly acquire: (choice: Choice, label: string) => Effect.Effect<Acquired, SessionError, Scope.Scope>
}

/**
 * Builds the session source over the `SessionStore` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Sessions, never, Requirements> = Effect.map(SessionStore.SessionStore, (store) => {
  const acquired = (session: Session.Session, source: "startup" | "resume"): Acquired => ({
    session,
    source,
    flush: store.flush(session.id)
  })
  const create = (id: string, cwd: string | undefined) =>
    Effect.map(store.create({ id, ...(cwd === undefined ? {} : { cwd }) }), (s) => acquired(s, "startup"))
  return {
    acquire: (choice, label) => {
      switch (choice._tag) {
        case "New":
          return Effect.flatMap(
            choice.id === undefined ? Effect.sync(() => `${label}-session-${crypto.randomUUID()}`) : Effect.succeed(choice.id),
            (id) => create(id, choice.cwd)
          )
        case "Auto":
          return store.open(choice.id).pipe(
            Effect.map((s) => acquired(s, "resume")),
            Effect.catchIf((e) => e.code === "SESSION_NOT_FOUND", () => create(choice.id, choice.cwd))
          )
        case "Resume":
          return Effect.map(store.open(choice.id), (s) => acquired(s, "resume"))
        case "Fork":
          return Effect.map(store.fork(choice.from, choice.boundary, choice.id), (s) => acquired(s, "startup"))
      }
    }
  }
})

/**
 * A `SessionStore` over in-memory persistence.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<Provided> = SessionStore.layerMemory
