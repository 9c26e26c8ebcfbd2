/**
 * In-process kit for the command-hook bridge: the real loop (TestKit: scripted model, real
 * session, real tool scheduler) with the built-in tools over a temp workspace, the bridge and the
 * permission engine installed as the CLI installs them, and real hook scripts run as child
 * processes.
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { chmodSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type * as Scripted from "../../src/Adapter/Scripted.js"
import * as Bridge from "../../src/Hooks/Bridge.js"
import * as AgentSessions from "../../src/Workspace/AgentSessions.js"
import * as Permissions from "../../src/Policy/Permissions.js"
import * as Settings from "../../src/Workspace/Settings.js"
import type * as SettingsFile from "../../src/Workspace/SettingsFile.js"
import * as BuiltinTools from "../../src/Tools/BuiltinTools.js"
import * as Workspace from "../../src/Tools/Workspace.js"
import * as TestKit from "../../src/Loop/TestKit.js"
import type { SessionEvent } from "../../src/Session/SessionEvent.js"

/** A fresh real temp directory. */
export const tempRoot = (): string => realpathSync(mkdtempSync(join(tmpdir(), "hooks-")))

/** Writes an executable script (with its own shebang) and returns its path. */
export const script = (dir: string, name: string, body: string): string => {
  const file = join(dir, name)
  writeFileSync(file, body)
  chmodSync(file, 0o755)
  return file
}

/** A handler entry of the settings shape. */
export type Handler = { readonly type: "command"; readonly command: string; readonly timeout?: number; readonly onFailure?: "continue" | "block" }

/** The `hooks` key of a settings file. */
export type HookConfig = Record<string, ReadonlyArray<{ readonly matcher?: string; readonly hooks: ReadonlyArray<Handler> }>>

/** Settings as if read from one file of the given dialect. */
export const settingsOf = (
  hooks: HookConfig,
  options: { readonly dialect?: SettingsFile.Dialect; readonly stopHookLimit?: number; readonly rules?: Settings.Loaded["rules"] } = {}
): Settings.Loaded => {
  const merged = Settings.merge([{
    source: { path: "settings.json", display: "settings.json", dialect: options.dialect ?? "claude" },
    decoded: { settings: { hooks, ...(options.stopHookLimit === undefined ? {} : { stopHookLimit: options.stopHookLimit }) }, warnings: [] }
  }])
  return { ...merged, rules: options.rules ?? [] }
}

/** The layer: loop + built-in tools + bridge + permissions (approval `auto` unless told). */
export const layer = (
  root: string,
  responses: Scripted.Script,
  settings: Settings.Loaded,
  notices: Array<string>,
  approval: "auto" | "deny" = "auto"
) => {
  const permissions = Permissions.layer({ cwd: root, settings, approval })
  const installs = Layer.effectDiscard(Effect.andThen(
    Bridge.install({
      cwd: root,
      settings,
      permissionMode: "default",
      notice: (line) => Effect.sync(() => void notices.push(line)),
      graceMs: 200
    }),
    Permissions.install
  )).pipe(Layer.provide(Layer.merge(AgentSessions.layer, permissions)))
  return Layer.provideMerge(
    installs,
    Layer.provideMerge(
      TestKit.layer({ script: responses, tools: BuiltinTools.tools() }),
      Layer.provideMerge(Workspace.layer(root), NodeServices.layer)
    )
  )
}

/** The tool results' texts, in order. */
export const resultTexts = (events: ReadonlyArray<SessionEvent>): ReadonlyArray<string> =>
  events.flatMap((e) =>
    e.type === "tool/result" ? [e.data.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("\n")] : []
  )

/** Events of one type. */
export const ofType = <K extends SessionEvent["type"]>(events: ReadonlyArray<SessionEvent>, type: K) =>
  events.filter((e): e is Extract<SessionEvent, { type: K }> => e.type === type)
