/**
 * The `harness` command tree: every command and subcommand with its options. `Program` runs it; the CLI
 * reference (`docs/reference/cli.md`, `npm run docs`) is generated from it.
 *
 * @since 0.1.0
 */
import * as Command from "effect/cli/Command"
import * as Acp from "./commands/Acp.js"
import * as Chat from "./commands/Chat.js"
import * as Mcp from "./commands/Mcp.js"
import * as Models from "./commands/Models.js"
import * as Run from "./commands/Run.js"
import * as Sessions from "./commands/Sessions.js"

/**
 * The root command, `harness`, with its subcommands.
 *
 * @since 0.1.0
 * @category constructors
 */
export const root = Command.make("harness").pipe(
  Command.withDescription("effect-harness: an Effect-native coding agent"),
  Command.withSubcommands([Run.command, Chat.command, Sessions.command, Models.command, Mcp.command, Acp.command])
)
