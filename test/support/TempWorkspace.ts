/**
 * Test helper: a real temporary workspace directory with the built-in tools' `Workspace` service.
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as FileSystem from "effect/FileSystem"
import * as Path from "effect/Path"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Workspace from "../../src/Tools/Workspace.js"

/** Runs `body` with a fresh temp workspace (removed at scope close); `root` is its real path. */
export const withWorkspace = <A, E>(
  body: (root: string) => Effect.Effect<A, E, Workspace.Workspace | FileSystem.FileSystem | Path.Path | Scope.Scope>
) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const dir = yield* fs.makeTempDirectoryScoped({ prefix: "harness-ws-" })
    const ws = yield* Workspace.make(dir)
    return yield* body(ws.root).pipe(Effect.provideService(Workspace.Workspace, ws))
  }).pipe(Effect.provide(NodeServices.layer))

/** Writes files (creating parent dirs) relative to `root`. */
export const writeFiles = (root: string, files: Record<string, string | Uint8Array>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    for (const [rel, content] of Object.entries(files)) {
      const abs = path.join(root, rel)
      yield* fs.makeDirectory(path.dirname(abs), { recursive: true })
      if (typeof content === "string") yield* fs.writeFileString(abs, content)
      else yield* fs.writeFile(abs, content)
    }
  })

/** The text of the first block of an outcome. */
export const textOf = (outcome: { readonly content: ReadonlyArray<{ readonly type: string }> }): string => {
  const first = outcome.content[0]
  return first !== undefined && first.type === "text" && "text" in first && typeof first.text === "string"
    ? first.text
    : ""
}
