import * as Effect from "effect/Effect"
import { CodingAgent, Scripted } from "../../src/index.js"

// the model: one line to swap, e.g. `OpenAiCompatible.layerConfig("deepseek")` with model "deepseek-chat"
const adapter = Scripted.layer([Scripted.call("c1", "ls", "{}"), Scripted.text("It holds notes.txt.")])

export const ask = (cwd: string, question: string) =>
  Effect.gen(function*() {
    const agent = yield* CodingAgent.make() // a new session in `cwd`, with the layer's provider and model
    return yield* agent.prompt(question) // runs the turn (tools, rules, hooks) and returns the answer
  }).pipe(Effect.scoped, Effect.provide(CodingAgent.layer({ adapter, model: "demo", cwd })))
