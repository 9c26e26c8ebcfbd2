/**
 * The request header (S-18, S-19): canonical form, equality, the fold over a log, and the rule the
 * loop uses to decide whether (and why) to log a new `request/header`.
 *
 * - Canonical form drops an empty `system` (`""`), empty `tools` and empty `messagePrefix`.
 * - Equality: call config per V-9 (`Message.configEquals`), same system, prefix by canonical JSON
 *   (absent ≡ empty), tools in order by canonical JSON (a pure reorder is a change).
 * - `request/header` always holds a full snapshot. `initial` = first header of the log; `resume` =
 *   first request of a new loop instance over a log that already has one (logged even when
 *   unchanged); `change` = a later request of the same instance with a different header;
 *   unchanged → nothing.
 *
 * @since 0.1.0
 */
import * as Json from "../Llm/Json.js"
import * as Message from "../Llm/Message.js"
import type { EpochHeader, SessionEvent } from "./SessionEvent.js"

/**
 * Why a header is logged.
 *
 * @since 0.1.0
 * @category models
 */
export type HeaderReason = "initial" | "resume" | "change"

/**
 * The canonical form (S-18): drops empty `system`, `tools` and `messagePrefix`. Returns the input
 * itself when already canonical.
 *
 * @since 0.1.0
 * @category canonical
 */
export const canonicalize = (header: EpochHeader): EpochHeader => {
  const dropSystem = header.system !== undefined && header.system.length === 0
  const dropTools = header.tools !== undefined && header.tools.length === 0
  const dropPrefix = header.messagePrefix !== undefined && header.messagePrefix.length === 0
  if (!dropSystem && !dropTools && !dropPrefix) return header
  const out: { -readonly [K in keyof EpochHeader]: EpochHeader[K] } = { config: header.config }
  if (header.system !== undefined && !dropSystem) out.system = header.system
  if (header.tools !== undefined && !dropTools) out.tools = header.tools
  if (header.messagePrefix !== undefined && !dropPrefix) out.messagePrefix = header.messagePrefix
  return Object.isFrozen(header) ? Object.freeze(out) : out
}

/**
 * The call-config fields a request declares (and a logged header keeps).
 *
 * @since 0.1.0
 * @category canonical
 */
export const configFields: ReadonlyArray<keyof Message.LlmCallConfig> = ["provider", "model", "temperature", "maxTokens", "stop"]

/**
 * The keys of `config` outside {@link configFields}: such a field would be sent to the adapter but
 * never logged, compared for a header change nor rebuilt by reconstruction, so the loop rejects it.
 *
 * @since 0.1.0
 * @category canonical
 */
export const undeclaredConfigFields = (config: object): ReadonlyArray<string> =>
  Object.keys(config).filter((key) => !(configFields as ReadonlyArray<string>).includes(key))

const jsonList = (xs: ReadonlyArray<unknown> | undefined): string =>
  xs === undefined ? "[]" : Json.canonical(xs as Json.Json)

/**
 * Header equality (S-18), on canonical forms.
 *
 * @since 0.1.0
 * @category canonical
 */
export const equals = (a: EpochHeader, b: EpochHeader): boolean => {
  if (!Message.configEquals(a.config, b.config)) return false
  if ((a.system ?? "") !== (b.system ?? "")) return false
  if ((a.tools?.length ?? 0) !== (b.tools?.length ?? 0)) return false
  return jsonList(a.tools) === jsonList(b.tools) && jsonList(a.messagePrefix) === jsonList(b.messagePrefix)
}

/**
 * The latest `request/header` snapshot of a log, canonical, or `undefined` (S-19).
 *
 * @since 0.1.0
 * @category folds
 */
export const foldRequestHeader = (events: ReadonlyArray<SessionEvent>): EpochHeader | undefined => {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i] as SessionEvent
    if (e.type === "request/header") return canonicalize(e.data.header)
  }
  return undefined
}

/**
 * Whether (and why) the loop logs a header before a request (S-19): `previous` is the log's
 * latest header (`Session.requestHeader`), `next` the header of the request about to be sent,
 * `firstOfInstance` whether this is the first request of this loop instance. `undefined` = log
 * nothing.
 *
 * @since 0.1.0
 * @category decisions
 */
export const decideHeader = (
  previous: EpochHeader | undefined,
  next: EpochHeader,
  firstOfInstance: boolean
): HeaderReason | undefined => {
  if (previous === undefined) return "initial"
  if (firstOfInstance) return "resume"
  return equals(previous, next) ? undefined : "change"
}
