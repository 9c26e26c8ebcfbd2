/**
 * The HTTP client a provider adapter uses when none is provided (issue 20): undici on Node, over
 * the process-global dispatcher (`undici.getGlobalDispatcher()`, so a proxy or agent a program
 * installed with `setGlobalDispatcher` applies), created once per process and never destroyed.
 *
 * Why: a client is a resource. `NodeHttpClient.layerUndici` owns an `Agent` that is destroyed
 * when the layer's scope closes, so providing it only while constructing an adapter
 * (`make(...).pipe(Effect.provide(NodeHttpClient.layerUndici))`) hands the adapter a client that
 * is already dead at its first request ("The client is destroyed"). An adapter constructed
 * without a client in its context owns this one instead, whose lifetime is the process: no scope
 * can end it early. (A client the caller does provide is used as is, and stays the caller's to
 * keep alive, e.g. with `Layer.provide` on the adapter's layer.) undici is loaded on first use,
 * so programs that never reach a remote provider do not pay for it at start-up.
 *
 * @since 0.1.0
 */
import * as HttpClient from "effect/http/HttpClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

let shared: HttpClient.HttpClient | undefined = undefined

/**
 * The shared default client (undici over the global dispatcher), created on first use.
 *
 * @since 0.1.0
 * @category constructors
 */
export const get: Effect.Effect<HttpClient.HttpClient> = Effect.suspend(() =>
  shared !== undefined
    ? Effect.succeed(shared)
    : Effect.flatMap(
      Effect.promise(() => import("@effect/platform-node/NodeHttpClient")),
      (NodeHttpClient) =>
        // Effect 4: `makeUndici` reads its `Dispatcher` from the context (here undici's global one);
        // undici's own timers are off (the byte timers of `HttpEdge` bound every read). Not
        // `@effect/platform-node/Undici`: its `export *` of a CommonJS module is lost across a
        // dynamic import in the split bundle.
        Effect.map(
          Effect.provide(NodeHttpClient.makeUndici, NodeHttpClient.dispatcherLayerGlobal),
          (client) => (shared ??= client)
        )
    )
)

/**
 * The client an adapter uses: the one in the context when the caller provided one, else the
 * shared default ({@link get}).
 *
 * @since 0.1.0
 * @category constructors
 */
export const forAdapter: Effect.Effect<HttpClient.HttpClient> = Effect.flatMap(
  Effect.serviceOption(HttpClient.HttpClient),
  Option.match({ onNone: () => get, onSome: Effect.succeed })
)
