/**
 * What a backend instance keeps per session right now: its diagnostics for leak checks (issue
 * 20: a released session must leave nothing behind) and for embedders watching descriptors.
 *
 * @since 0.1.0
 */

/**
 * Per-session structures of one backend instance.
 *
 * @since 0.1.0
 * @category models
 */
export interface Tracked {
  /** sessions the instance tracks (intents, adopted or written sessions) */
  readonly sessions: number
  /** ids with an operation running or waiting */
  readonly serializing: number
  /** ids whose writer lock the instance holds */
  readonly held: number
  /** files the instance has open now (JSONL; 0 elsewhere) */
  readonly openFiles: number
}

/**
 * A backend that reports what it tracks.
 *
 * @since 0.1.0
 * @category models
 */
export interface WithTracked {
  readonly tracked: () => Tracked
}
