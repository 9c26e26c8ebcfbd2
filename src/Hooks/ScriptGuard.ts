/**
 * A project hook runs only while the workspace files its command names are what the user approved
 * (issue 26). The approval's fingerprint is checked when the harness starts, but a hook can run
 * many times in one session, after `write`, `edit` or a sandboxed command rewrote its script:
 * without a second check the rewritten script would run unsandboxed in the same session.
 *
 * The guard takes the digest of each project hook's named files when the hooks are installed (just
 * after the approval) and compares it before every run.
 *
 * @since 0.1.0
 */
import type * as FileSystem from "effect/FileSystem"
import * as Effect from "effect/Effect"
import * as WorkspaceScripts from "../Mcp/WorkspaceScripts.js"

/**
 * The digest of the workspace files a command names (see `WorkspaceScripts`).
 *
 * @since 0.1.0
 * @category utils
 */
export const scriptsDigest = (command: string, root: string): Effect.Effect<string, never, FileSystem.FileSystem> =>
  Effect.map(
    WorkspaceScripts.digest(root, WorkspaceScripts.namedPaths(WorkspaceScripts.shellWords(command, root), root)),
    WorkspaceScripts.combined
  )

/**
 * A check of one command against the digest taken now: `true` while its named files are unchanged.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  command: string,
  root: string
): Effect.Effect<Effect.Effect<boolean, never, FileSystem.FileSystem>, never, FileSystem.FileSystem> =>
  Effect.map(scriptsDigest(command, root), (approved) =>
    Effect.map(scriptsDigest(command, root), (now) => now === approved))
