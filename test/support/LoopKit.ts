/**
 * Small helpers for loop tests: waiting for a logged event, tools, content shorthands.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Schema from "effect/Schema"
import * as ContentBlock from "../../src/Llm/ContentBlock.js"
import type { Session } from "../../src/Session/Session.js"
import type { SessionEvent } from "../../src/Session/SessionEvent.js"
import * as Tool from "../../src/Loop/Tool.js"

/** Resolves with the first event (already logged or future) satisfying `predicate`. */
export const whenEvent = (
  session: Session,
  predicate: (event: SessionEvent) => boolean
): Effect.Effect<SessionEvent, never, Scope.Scope> =>
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
