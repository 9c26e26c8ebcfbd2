/**
 * Attack (issue 26, item 5 "keys to third parties"): the bundled CLI against a loopback server that
 * records every request's headers. `OPENAI_API_KEY` is set in the environment throughout.
 *
 * - `--provider openai-compatible --base-url <loopback>`: the server never sees `OPENAI_API_KEY`
 *   (before the fix it arrived as `Authorization: Bearer …`); with `OPENAI_COMPATIBLE_API_KEY` set,
 *   that key is sent instead; `--api-key-env NAME` sends the named variable.
 * - `--provider openai --base-url <loopback>`: refused with one line, exit 2, no request at all.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Cli from "../support/Cli.js"
import * as Wire from "../support/CliWire.js"
import * as FakeProvider from "../support/FakeProvider.js"

const OPENAI_KEY = `sk-secret-openai-${Math.random().toString(36).slice(2)}`

const answer = () => FakeProvider.sse(Wire.text("openai-compatible", "hello from the gateway", { input: 3, output: 4, cacheRead: 0 }))

describe("attack: provider keys (issue 26)", () => {
  it.live("[issue 26] openai-compatible never sends OPENAI_API_KEY; it sends OPENAI_COMPATIBLE_API_KEY or the --api-key-env variable", () =>
    Effect.gen(function*() {
      const home = yield* Cli.tempDir("attack-keys-home-")
      const work = yield* Cli.tempDir("attack-keys-ws-")
      const fake = yield* FakeProvider.make({ replies: [answer(), answer(), answer()] })
      const args = ["run", "--provider", "openai-compatible", "--model", "m", "--base-url", `${fake.url}/v1`, "hi"]
      const plain = yield* Cli.runCli(args, { cwd: work, home, env: { OPENAI_API_KEY: OPENAI_KEY } })
      expect(plain.code, plain.stderr).toBe(0)
      expect(plain.stdout).toContain("hello from the gateway")
      // the first request: no OPENAI_API_KEY, no Authorization at all
      const [first] = yield* fake.requests
      expect(JSON.stringify(first?.headers)).not.toContain(OPENAI_KEY)
      expect(first?.headers["authorization"]).toBeUndefined()
      const compat = yield* Cli.runCli(args, {
        cwd: work,
        home,
        env: { OPENAI_API_KEY: OPENAI_KEY, OPENAI_COMPATIBLE_API_KEY: "sk-compat-key" }
      })
      expect(compat.code, compat.stderr).toBe(0)
      const named = yield* Cli.runCli([...args.slice(0, -1), "--api-key-env", "MY_GATEWAY_KEY", "hi"], {
        cwd: work,
        home,
        env: { OPENAI_API_KEY: OPENAI_KEY, MY_GATEWAY_KEY: "sk-my-gateway" }
      })
      expect(named.code, named.stderr).toBe(0)
      const requests = yield* fake.requests
      expect(requests).toHaveLength(3)
      for (const r of requests) expect(JSON.stringify(r.headers)).not.toContain(OPENAI_KEY)
      expect(requests[0]?.headers["authorization"]).toBeUndefined()
      expect(requests[1]?.headers["authorization"]).toBe("Bearer sk-compat-key")
      expect(requests[2]?.headers["authorization"]).toBe("Bearer sk-my-gateway")
    }), 90_000)

  it.live("[issue 26] --provider openai --base-url <elsewhere> is refused in one line before any request", () =>
    Effect.gen(function*() {
      const home = yield* Cli.tempDir("attack-keys-home-")
      const work = yield* Cli.tempDir("attack-keys-ws-")
      const fake = yield* FakeProvider.make({ replies: [answer()] })
      const r = yield* Cli.runCli(["run", "--provider", "openai", "--base-url", `${fake.url}/v1`, "hi"], {
        cwd: work,
        home,
        env: { OPENAI_API_KEY: OPENAI_KEY }
      })
      expect(r.code).toBe(2)
      expect(Cli.linesOf(r.stderr)).toEqual([
        `refusing to send OPENAI_API_KEY to ${new URL(fake.url).host} (it only goes to api.openai.com); name the key's variable with --api-key-env NAME`
      ])
      expect(yield* fake.requests).toHaveLength(0)
    }), 90_000)
})
