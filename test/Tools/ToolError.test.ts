import * as NodeServices from "@effect/platform-node/NodeServices"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Path from "effect/Path"
import * as PlatformError from "effect/PlatformError"
import * as FileIo from "../../src/Tools/internal/FileIo.js"
import * as SafeFs from "../../src/Tools/internal/SafeFs.js"
import * as ToolError from "../../src/Tools/ToolError.js"
import * as Workspace from "../../src/Tools/Workspace.js"

const systemError = (tag: PlatformError.SystemErrorTag, code?: string) =>
  PlatformError.systemError({
    _tag: tag,
    module: "FileSystem",
    method: "stat",
    pathOrDescriptor: "/w/a.txt",
    ...(code === undefined ? {} : { cause: Object.assign(new Error(code), { code }) })
  })

const errno = (code: string) => Object.assign(new Error(`${code}: failed`), { code })

describe("error-code mappings (T-6)", () => {
  it("fromPlatform reads the wrapper's reason: NotFound, PermissionDenied, other system errors, bad arguments", () => {
    expect(ToolError.fromPlatform(systemError("NotFound", "ENOENT"), "a.txt")).toMatchObject({
      code: "NOT_FOUND",
      message: "no such file or directory: a.txt"
    })
    expect(ToolError.fromPlatform(systemError("PermissionDenied", "EACCES"), "a.txt")).toMatchObject({
      code: "PERMISSION_DENIED",
      message: "permission denied: a.txt"
    })
    expect(ToolError.fromPlatform(systemError("Busy", "EBUSY"), "a.txt")).toMatchObject({
      code: "IO_ERROR",
      message: "cannot access a.txt: Busy (EBUSY)"
    })
    expect(ToolError.fromPlatform(systemError("Unknown"), "a.txt")).toMatchObject({
      code: "IO_ERROR",
      message: "cannot access a.txt: Unknown"
    })
    const bad = PlatformError.badArgument({ module: "FileSystem", method: "stat", description: "bad path" })
    expect(ToolError.fromPlatform(bad, "a.txt")).toMatchObject({
      code: "IO_ERROR",
      message: "cannot access a.txt: FileSystem.stat: bad path"
    })
  })

  it("FileIo.toolError maps every errno the tools meet to its canonical code", () => {
    const cases: ReadonlyArray<readonly [unknown, ToolError.BuiltinToolErrorCode]> = [
      [errno("ENOENT"), "NOT_FOUND"],
      [errno("ENOTDIR"), "NOT_FOUND"],
      [errno("EACCES"), "PERMISSION_DENIED"],
      [errno("EPERM"), "PERMISSION_DENIED"],
      [errno("ELOOP"), "OUTSIDE_WORKSPACE"],
      [errno("EISDIR"), "NOT_A_FILE"],
      [errno("EIO"), "IO_ERROR"],
      [new SafeFs.EscapeError("a link leaves the root"), "OUTSIDE_WORKSPACE"]
    ]
    for (const [error, code] of cases) expect(FileIo.toolError(error, "a.txt").code).toBe(code)
    expect(FileIo.toolError(errno("EIO"), "a.txt").message).toBe("cannot access a.txt: EIO: failed (EIO)")
  })

  it.live("a workspace root that does not exist is NOT_FOUND; a file as the root is NOT_A_DIRECTORY", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const dir = yield* fs.makeTempDirectoryScoped({ prefix: "harness-root-" })
      const missing = yield* Effect.flip(Workspace.make(path.join(dir, "missing")))
      expect(missing.code).toBe("NOT_FOUND")
      expect(missing.message).toBe(`no such file or directory: ${path.join(dir, "missing")}`)
      yield* fs.writeFileString(path.join(dir, "file.txt"), "x")
      const notDir = yield* Effect.flip(Workspace.make(path.join(dir, "file.txt")))
      expect(notDir.code).toBe("NOT_A_DIRECTORY")
    }).pipe(Effect.provide(NodeServices.layer)))
})
