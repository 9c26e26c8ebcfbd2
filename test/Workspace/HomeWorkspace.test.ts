import * as NodeServices from "@effect/platform-node/NodeServices"
import { describe, expect, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as HomeWorkspace from "../../src/Workspace/HomeWorkspace.js"

describe("HomeWorkspace (issue 26)", () => {
  it("/ and any directory containing a home are refused; a project inside the home is fine", () => {
    expect(HomeWorkspace.problem("/", ["/home/u"])).toBe("the workspace / is the whole file system")
    expect(HomeWorkspace.problem("/home/u", ["/home/u"])).toBe("the workspace /home/u is your home directory")
    expect(HomeWorkspace.problem("/home", ["/home/u"])).toBe("the workspace /home contains your home directory /home/u")
    expect(HomeWorkspace.problem("/home/u/project", ["/home/u"])).toBeUndefined()
    expect(HomeWorkspace.problem("/home/user2", ["/home/u"])).toBeUndefined()
    // a passwd home of `/` (some service accounts) does not refuse every workspace
    expect(HomeWorkspace.problem("/srv/p", ["/"])).toBeUndefined()
  })

  it.effect("check: $HOME through a link is found; the flag or a yes accepts it; no refuses with HomeWorkspaceError (the CLI exits 2)", () =>
    Effect.gen(function*() {
      const root = realpathSync(mkdtempSync(join(tmpdir(), "homews-")))
      const home = join(root, "real-home")
      mkdirSync(home)
      symlinkSync(home, join(root, "link"))
      const withHome = <A, E, R>(e: Effect.Effect<A, E, R>) =>
        Effect.provideService(e, ConfigProvider.ConfigProvider, ConfigProvider.fromEnvRecord({ HOME: join(root, "link") }))
      const refused = yield* Effect.exit(withHome(HomeWorkspace.check({ cwd: home, allow: false })))
      expect(Exit.isFailure(refused)).toBe(true)
      if (Exit.isFailure(refused)) {
        expect(JSON.stringify(refused.cause)).toContain("--allow-home-workspace")
        expect(JSON.stringify(refused.cause)).toContain("\"_tag\":\"HomeWorkspaceError\"")
      }
      expect(Exit.isSuccess(yield* Effect.exit(withHome(HomeWorkspace.check({ cwd: home, allow: true }))))).toBe(true)
      const yes = yield* Effect.exit(withHome(HomeWorkspace.check({ cwd: home, allow: false, ask: () => Effect.succeed(true) })))
      expect(Exit.isSuccess(yes)).toBe(true)
      const no = yield* Effect.exit(withHome(HomeWorkspace.check({ cwd: home, allow: false, ask: () => Effect.succeed(false) })))
      expect(Exit.isFailure(no)).toBe(true)
      expect(Exit.isSuccess(yield* Effect.exit(withHome(HomeWorkspace.check({ cwd: join(home, "p"), allow: false }))))).toBe(true)
    }).pipe(Effect.provide(NodeServices.layer)))
})
