/**
 * Checkpoints of every workspace effect and rewind (issue 33): the pre-image journal the tools
 * write through, its content-addressed store, the `checkpoint/manifest` event, and code rewind.
 *
 * @since 0.1.0
 */
export * as CheckpointError from "./CheckpointError.js"
export * as Checkpointed from "./Checkpointed.js"
export * as FileState from "./FileState.js"
export * as Install from "./Install.js"
export * as Journal from "./Journal.js"
export * as Manifest from "./Manifest.js"
export * as Rewind from "./Rewind.js"
export * as Scan from "./Scan.js"
export * as Store from "./Store.js"
