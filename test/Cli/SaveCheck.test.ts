import { describe, expect, it } from "@effect/vitest"
import * as SaveCheck from "../../src/Cli/SaveCheck.js"
import * as SessionError from "../../src/Session/SessionError.js"

describe("SaveCheck", () => {
  it("[issue 10, DEC-11] one line naming the file and the OS error, from osCode or a nested cause", () => {
    expect(
      SaveCheck.line(SessionError.make("PERSISTENCE_FAILED", "write failed", { file: "/h/s/a.jsonl", osCode: "ENOSPC" }))
    ).toBe("error: the session could not be saved: /h/s/a.jsonl: ENOSPC (no space left on device)")
    expect(
      SaveCheck.line(
        SessionError.make("IO", "write /h/s/b.jsonl: EROFS…", { file: "/h/s/b.jsonl", cause: { cause: { code: "EROFS" } } })
      )
    ).toBe("error: the session could not be saved: /h/s/b.jsonl: EROFS (read-only file system)")
    expect(SaveCheck.line(SessionError.make("PERSISTENCE_FAILED", "disk gone\nmore", { file: "/f" }))).toBe(
      "error: the session could not be saved: /f: disk gone"
    )
    expect(SaveCheck.isSaveFailure(SessionError.make("SESSION_LOCKED", "locked"))).toBe(false)
  })
})
