/**
 * The session log: events, the live session, surface, verbatim projection, request header, prefix attribution and
 * reconstruction, fork, crash repair, the session store and the JSONL and in-memory backends. The SQLite backend
 * (over Node's built-in `node:sqlite`) has its own entry, `effect-harness/sqlite`, so users of the other
 * backends never load it.
 *
 * @since 0.1.0
 */
export * as CacheAttribution from "./CacheAttribution.js"
export * as Fork from "./Fork.js"
export * as Jsonl from "./persistence/Jsonl.js"
export * as Memory from "./persistence/Memory.js"
export * as Projection from "./Projection.js"
export * as Reconstruct from "./Reconstruct.js"
export * as Repair from "./Repair.js"
export * as ResumePlan from "./ResumePlan.js"
export * as RequestHeader from "./RequestHeader.js"
export * as Session from "./Session.js"
export * as SessionError from "./SessionError.js"
export * as SessionEvent from "./SessionEvent.js"
export * as SessionPersistence from "./SessionPersistence.js"
export * as SessionStore from "./SessionStore.js"
export * as Surface from "./Surface.js"
export * as Validate from "./Validate.js"
