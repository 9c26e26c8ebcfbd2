import { describe, expect, it } from "@effect/vitest"
import * as NodeVersion from "../../src/Cli/NodeVersion.js"

describe("NodeVersion (issue 27: the runtime floor)", () => {
  it("22.19 and newer run; older lines do not", () => {
    for (const v of ["22.19.0", "22.23.3", "23.0.0", "24.1.2"]) expect(NodeVersion.supported(v)).toBe(true)
    for (const v of ["22.18.9", "20.20.2", "18.0.0", ""]) expect(NodeVersion.supported(v)).toBe(false)
  })
})
