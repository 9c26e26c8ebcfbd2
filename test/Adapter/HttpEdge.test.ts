// vitest project: integration
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientError from "effect/http/HttpClientError"
import type * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import { build } from "esbuild"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import * as HttpEdge from "../../src/Adapter/HttpEdge.js"
import * as FakeProvider from "../support/FakeProvider.js"

const root = fileURLToPath(new URL("../../", import.meta.url))
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { name: string; version: string; homepage: string }

const post = (client: HttpClient.HttpClient, url: string, headers: Record<string, string> = {}) =>
  HttpEdge.stream(client, {
    provider: "test",
    url,
    headers: HttpEdge.mergeHeaders([headers]),
    auth: { scheme: "bearer", key: Redacted.make("k-123456") },
    body: { hello: "wörld" }
  }).pipe(Stream.decodeText(), Stream.runCollect, Effect.map((c) => c.join("")))

describe("HttpEdge", () => {
  it("[DEC-8, C-6] the user-agent is effect-harness/<version> (+<homepage>) from package.json", () => {
    expect(HttpEdge.identity).toEqual({ product: pkg.name, version: pkg.version, homepage: pkg.homepage })
    expect(HttpEdge.userAgent).toBe(`${pkg.name}/${pkg.version} (+${pkg.homepage})`)
    expect(HttpEdge.userAgent).toMatch(/^effect-harness\/\S+ \(\+https?:\/\/\S+\)$/)
  })

  it("[C-6] merged headers are lower-cased, later sets win, the attribution wins over any casing", () => {
    const merged = HttpEdge.mergeHeaders([
      { Accept: "a", "User-Agent": "x" },
      undefined,
      { accept: "b", "USER-AGENT": "y", "X-Extra": "1" }
    ])
    expect(merged).toEqual({ accept: "b", "x-extra": "1", "user-agent": HttpEdge.userAgent })
    expect(HttpEdge.mergeHeaders([], "custom/1 (+https://c)")["user-agent"]).toBe("custom/1 (+https://c)")
  })

  it("joinUrl and scrub", () => {
    expect(HttpEdge.joinUrl("https://h/v1/", "/chat/completions")).toBe("https://h/v1/chat/completions")
    expect(HttpEdge.joinUrl("https://h", "v1/messages")).toBe("https://h/v1/messages")
    expect(HttpEdge.scrub("key sk-1 and sk-1 again", ["sk-1", ""])).toBe("key <redacted> and <redacted> again")
  })

  for (const [name, layer] of [["undici", NodeHttpClient.layerUndici], ["fetch", FetchHttpClient.layer]] as const) {
    it.live(`AC-5 [C-6] the attribution header and JSON body reach the wire over ${name}`, () =>
      Effect.gen(function*() {
        const fake = yield* FakeProvider.make({ replies: [FakeProvider.sse("data: x\n\n")] })
        const client = yield* HttpClient.HttpClient
        const text = yield* post(client, `${fake.url}/p`, { "User-Agent": "curl/8" })
        expect(text).toBe("data: x\n\n")
        const [received] = yield* fake.requests
        expect(received?.headers["user-agent"]).toBe(HttpEdge.userAgent)
        expect(received?.headers["authorization"]).toBe("Bearer k-123456")
        expect(received?.headers["content-type"]).toBe("application/json")
        expect(received?.body).toEqual({ hello: "wörld" })
        expect(Object.keys(received?.headers ?? {}).filter((h) => h === "http-referer" || h === "x-title" || h.startsWith("x-openrouter-")))
          .toEqual([])
      }).pipe(Effect.provide(layer)))
  }

  it.live("a body that is not JSON-serializable is a typed INVALID_REQUEST, nothing is sent", () =>
    Effect.gen(function*() {
      const fake = yield* FakeProvider.make()
      const client = yield* HttpClient.HttpClient
      const cyclic: Record<string, unknown> = {}
      cyclic["self"] = cyclic
      const error = yield* HttpEdge.stream(client, { provider: "t", url: fake.url, headers: {}, body: cyclic }).pipe(
        Stream.runDrain,
        Effect.flip
      )
      expect(error.code).toBe("INVALID_REQUEST")
      expect((yield* fake.requests).length).toBe(0)
      const invalid = yield* HttpEdge.stream(client, { provider: "t", url: "not a url", headers: {}, body: {} }).pipe(
        Stream.runDrain,
        Effect.flip
      )
      expect(invalid.code).toBe("INVALID_REQUEST")
    }).pipe(Effect.provide(NodeHttpClient.layerUndici)))

  it.effect("[E-2] every HttpClientError reason maps to its canonical code (Effect 4: one error class, the kind in `reason`)", () =>
    Effect.gen(function*() {
      const request = { provider: "t", url: "http://127.0.0.1:1/x", headers: {}, body: {} }
      const failWith = (reason: (request: HttpClientRequest.HttpClientRequest) => HttpClientError.HttpClientErrorReason) =>
        HttpClient.make((req) => Effect.fail(new HttpClientError.HttpClientError({ reason: reason(req) })))
      const errorOf = (client: HttpClient.HttpClient) => Effect.flip(Stream.runDrain(HttpEdge.stream(client, request)))
      const cases: ReadonlyArray<readonly [HttpClient.HttpClient, string, RegExp]> = [
        [failWith((req) => new HttpClientError.InvalidUrlError({ request: req })), "INVALID_REQUEST", /^invalid URL \(POST /],
        [failWith((req) => new HttpClientError.EncodeError({ request: req })), "INVALID_REQUEST", /^request body could not be encoded/],
        [
          failWith((req) => new HttpClientError.TransportError({ request: req, cause: new Error("connect ECONNREFUSED") })),
          "TRANSPORT",
          /^transport error: connect ECONNREFUSED \(POST /
        ],
        [
          failWith((req) => new HttpClientError.TransportError({ request: req, cause: Object.assign(new Error("gone"), { code: "UND_ERR_DESTROYED" }) })),
          "TRANSPORT",
          /^the HTTP client was closed before this request/
        ],
        // a body cut mid-read: the response's stream fails with a DecodeError
        [
          HttpClient.make((req) =>
            Effect.succeed(HttpClientResponse.fromWeb(
              req,
              new Response(
                new ReadableStream<Uint8Array>({
                  start: (controller) => {
                    controller.enqueue(new TextEncoder().encode("data: {}\n\n"))
                    controller.error(new Error("socket reset"))
                  }
                }),
                { headers: { "content-type": "text/event-stream" } }
              )
            ))
          ),
          "TRANSPORT",
          /^transport error: .*socket reset/
        ]
      ]
      for (const [client, code, message] of cases) {
        const error = yield* errorOf(client)
        expect(error.code, String(message)).toBe(code)
        expect(error.message).toMatch(message)
      }
    }))

  it.live("[DEC-8] the identity is inlined by an esbuild bundle (package.json is not read at run time)", () =>
    Effect.gen(function*() {
      const dir = yield* Effect.acquireRelease(
        // inside the repository, so the external `effect` packages resolve from node_modules
        Effect.sync(() => {
          mkdirSync(join(root, "node_modules/.cache"), { recursive: true })
          return mkdtempSync(join(root, "node_modules/.cache/harness-bundle-"))
        }),
        (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
      )
      const entry = join(dir, "entry.ts")
      writeFileSync(entry, `export { userAgent } from ${JSON.stringify(join(root, "src/Adapter/HttpEdge.ts"))}\n`)
      const outfile = join(dir, "bundle.mjs")
      yield* Effect.promise(() =>
        build({
          entryPoints: [entry],
          bundle: true,
          packages: "external",
          platform: "node",
          format: "esm",
          outfile,
          logLevel: "silent"
        })
      )
      const code = readFileSync(outfile, "utf8")
      expect(code).toContain(pkg.homepage) // inlined, not read at run time
      expect(code).not.toMatch(/from\s+["'][^"']*package\.json["']/)
      const mod = yield* Effect.promise(() => import(pathToFileURL(outfile).href) as Promise<{ userAgent: string }>)
      expect(mod.userAgent).toBe(HttpEdge.userAgent)
    }).pipe(Effect.scoped))
})
