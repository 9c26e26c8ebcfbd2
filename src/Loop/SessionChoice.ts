/**
 * Which session an agent runs over (`Agent.SessionChoice`; see `Loop/Agent`'s module doc). A module of its own so
 * the agent and its session plumbing (`internal/Sessions`) share it without importing each other.
 *
 * @since 0.1.0
 */

/**
 * Which session the agent runs over.
 *
 * @since 0.1.0
 * @category models
 */
export type SessionChoice =
  | { readonly _tag: "New"; readonly id?: string; readonly cwd?: string }
  | { readonly _tag: "Auto"; readonly id: string; readonly cwd?: string }
  | { readonly _tag: "Resume"; readonly id: string }
  | { readonly _tag: "Fork"; readonly from: string; readonly boundary?: number; readonly id?: string }
