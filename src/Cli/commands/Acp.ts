/**
 * `harness acp [options]`: runs as an Agent Client Protocol agent on stdin/stdout (newline-delimited
 * JSON-RPC), for editors that speak ACP (Zed, JetBrains, …): `src/Acp/AcpAgent` over the same
 * harness `run` and `chat` use (provider, tools, permission rules, hooks, workspace context, session
 * store). stdout carries the protocol and nothing else; diagnostics go to stderr.
 *
 * Approvals: every question of the permission engine goes to the editor
 * (`session/request_permission`); `--yes` approves what the rules would ask about (never a question
 * only a person may answer). The workspace's own configuration applies only when approved before
 * (`--trust-workspace`), since stdin is the protocol and no question can be asked at start.
 * SIGINT / SIGTERM / SIGHUP cancel running turns, save and release every session, and exit.
 *
 * @since 0.1.0
 */
import * as Acp from "@agentclientprotocol/sdk"
import * as Command from "effect/cli/Command"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import { Readable, Writable } from "node:stream"
import { identity } from "../../Adapter/HttpEdge.js"
import * as AcpAgent from "../../Acp/AcpAgent.js"
import * as AcpApprovals from "../../Acp/AcpApprovals.js"
import * as ModelCatalog from "../../Llm/ModelCatalog.js"
import type * as LoopApproval from "../../Loop/Approval.js"
import { CliError } from "../CliError.js"
import * as CommonOptions from "../CommonOptions.js"
import * as HarnessLayer from "../HarnessLayer.js"
import * as Logger from "../Logger.js"
import * as ProviderChoice from "../ProviderChoice.js"
import * as Signals from "../Signals.js"
import * as Run from "./Run.js"

/**
 * `acceptEdits` approves `edit` and `write` without asking, except a question only a person may
 * answer (the permission engine says so in its reason: a protected file, an unknowable command).
 *
 * @since 0.1.0
 * @category utils
 */
export const autoApprove = (request: LoopApproval.ApprovalRequest): boolean =>
  (request.name === "edit" || request.name === "write") && !/only a person may/.test(request.reason ?? "")

/**
 * The `acp` command.
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make("acp", { ...CommonOptions.options }, (args) =>
  Effect.gen(function*() {
    const cwd = CommonOptions.cwdOf(args)
    yield* CommonOptions.validate(args)
    const choice = yield* ProviderChoice.resolve(args)
    yield* Run.announce(choice)
    const approvals = yield* AcpApprovals.make
    const setup: HarnessLayer.Setup = {
      choice,
      cwd,
      store: args.store,
      approval: args.yes ? "auto" : "ask",
      approver: approvals.ask,
      workspaceTrust: CommonOptions.workspaceTrustOf(args, false),
      mcpConfig: args.mcpConfig,
      sandbox: CommonOptions.sandboxOf(args),
      ...CommonOptions.settingsOf(args)
    }
    const provider = HarnessLayer.routeOf(choice)
    const stream = Acp.ndJsonStream(
      Writable.toWeb(process.stdout),
      Readable.toWeb(process.stdin)
    )
    const serve = AcpAgent.serve(stream, {
      cwd,
      provider,
      model: choice.model,
      models: ModelCatalog.builtIn.filter((e) => e.provider === provider).map((e) => e.model),
      agentInfo: { name: "effect-harness", version: identity.version },
      approvals,
      autoApprove,
      agentOptions: CommonOptions.agentLimits(args)
    })
    const stopped = yield* Effect.scoped(Effect.gen(function*() {
      const stops = yield* Signals.listen()
      return yield* Effect.raceFirst(Effect.as(serve, undefined), Effect.map(Queue.take(stops), (stop) => stop))
    })).pipe(Effect.provide(HarnessLayer.layer(setup)))
    if (stopped !== undefined) return yield* new CliError({ message: "", exitCode: Signals.exitCode(stopped) })
    return yield* Effect.void
  }).pipe(Logger.verbose(args.verbose))
).pipe(Command.withDescription("run as an Agent Client Protocol agent on stdin/stdout (for Zed, JetBrains and other ACP editors)"))
