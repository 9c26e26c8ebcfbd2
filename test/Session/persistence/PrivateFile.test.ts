import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { chmodSync, mkdirSync, mkdtempSync, statSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as PrivateFile from "../../../src/Session/persistence/PrivateFile.js"

const modeOf = (p: string) => statSync(p).mode & 0o777

describe("PrivateFile (issue 26)", () => {
  it.effect("write: 0600 in a 0700 directory (an existing looser directory is tightened); read back", () =>
    Effect.gen(function*() {
      const root = mkdtempSync(join(tmpdir(), "private-"))
      const dir = join(root, "a", "b")
      yield* PrivateFile.write(join(dir, "f.json"), "{}")
      expect(modeOf(join(dir, "f.json"))).toBe(0o600)
      expect(modeOf(dir)).toBe(0o700)
      expect(modeOf(join(root, "a"))).toBe(0o700)
      const loose = join(root, "loose")
      mkdirSync(loose, { mode: 0o755 })
      chmodSync(loose, 0o755)
      yield* PrivateFile.write(join(loose, "f.json"), "x")
      expect(modeOf(loose)).toBe(0o700)
      expect(yield* PrivateFile.read(join(dir, "f.json"))).toEqual(Option.some("{}"))
      expect(yield* PrivateFile.read(join(dir, "missing.json"))).toEqual(Option.none())
    }))

  it.effect("read refuses a file others can write, and a symbolic link", () =>
    Effect.gen(function*() {
      const root = mkdtempSync(join(tmpdir(), "private-"))
      const file = join(root, "f.json")
      writeFileSync(file, "{}")
      chmodSync(file, 0o666)
      const open = yield* Effect.flip(PrivateFile.read(file))
      expect(open._tag).toBe("Untrusted")
      expect(open.message).toBe(`${file} is writable by other users (mode 666)`)
      chmodSync(file, 0o600)
      symlinkSync(file, join(root, "link.json"))
      const link = yield* Effect.flip(PrivateFile.read(join(root, "link.json")))
      expect(link.message).toContain("is a symbolic link")
    }))

  it("problem names the owner, the mode and the kind", () => {
    expect(PrivateFile.problem({ uid: 1, mode: 0o600, isFile: true }, 2)).toBe("is owned by another user (uid 1)")
    expect(PrivateFile.problem({ uid: 2, mode: 0o620, isFile: true }, 2)).toBe("is writable by other users (mode 620)")
    expect(PrivateFile.problem({ uid: 2, mode: 0o644, isFile: false }, 2)).toBe("is not a regular file")
    expect(PrivateFile.problem({ uid: 2, mode: 0o644, isFile: true }, 2)).toBeUndefined()
  })
})
