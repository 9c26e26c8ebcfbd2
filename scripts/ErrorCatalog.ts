/**
 * The error-code catalog (issue 18): every typed error class under `src/` (found by scanning for
 * `Schema.TaggedError`), its codes (read from the class: a `code` literal schema, a named literal schema, or a
 * `readonly code = "…"` property), what each code means, whether a model request failing with it is retried, and
 * the CLI's exit code when a turn ends with it (computed by `TurnOutcome.outcome`, the function the CLI uses).
 *
 * Meanings are written here, one per code; generation fails on a code without one, so a new code cannot reach the
 * catalog undocumented.
 */
import * as LlmError from "../src/Llm/LlmError.js"
import * as TurnOutcome from "../src/Cli/TurnOutcome.js"

/** A source file: repository-relative path and text. */
export interface Source {
  readonly path: string
  readonly text: string
}

/** One typed error class found in the source. */
export interface ErrorClass {
  readonly tag: string
  readonly path: string
  readonly summary: string
  readonly codes: ReadonlyArray<string>
}

/** What each code means, in the user's words. Shared by the classes that use the same code. */
const meanings: Readonly<Record<string, string>> = {
  // model requests (E-2)
  AUTH: "the provider rejected the API key (401/403)",
  RATE_LIMIT: "the provider is rate limiting (429, or its in-band rate-limit error)",
  SERVER: "the provider failed or is overloaded (5xx, 529, in-band server/overloaded errors)",
  CONTEXT_WINDOW_EXCEEDED: "the request is larger than the model's context window",
  INVALID_REQUEST: "the provider rejected the request as malformed (400 and its in-band equivalents)",
  EMPTY_RESPONSE: "the response ended without any content",
  STREAM_CLOSED: "the response stream ended before its end marker",
  MALFORMED_RESPONSE: "the provider sent something that is not its documented wire format",
  TIMEOUT: "no byte arrived within the first-byte or idle timeout",
  TRANSPORT: "the connection failed (refused, reset, DNS)",
  UNKNOWN_MODEL: "the provider does not know the model (404 / not_found about the model)",
  UNSUPPORTED_OPTION: "the request uses an option the provider profile cannot send",
  INVALID_REPLAY_STATE: "the history cannot be replayed to this provider (e.g. a reasoning block without its signature)",
  ABORTED: "the request or turn was cancelled",
  UNKNOWN: "a value that is not an error was thrown",
  SCRIPT_EXHAUSTED: "the scripted model has no reply left",
  OUTPUT_LIMIT: "one step streamed more than the output cap (`--max-output-bytes`, default 8 MiB); the stream was cut, the partial output kept",
  "HTTP_<status>": "any other non-2xx HTTP status",
  "<provider code>": "an in-band provider code with no canonical meaning, kept verbatim",
  NO_ADAPTER: "no adapter is registered for the requested provider",
  DUPLICATE_ADAPTER: "two adapters were registered for one provider",
  INVALID_ADAPTER: "an adapter registration is malformed",
  INVALID_CATALOG: "a model catalog entry is malformed",
  UNASSEMBLABLE_BLOCK: "a delta continues a block of a kind deltas cannot build",
  INVALID_RETRY_POLICY: "the retry policy's numbers are out of range",
  INVALID_SCRIPT: "a scripted-model script does not match its schema",
  INVALID_JSON: "a value is not lossless JSON (NaN, a function, a cycle, …)",
  // sessions and persistence
  INVALID_EVENT: "an appended event breaks the event schema or the log's rules",
  LEGACY_EVENT: "the log holds an event of a retired format",
  REENTRANT_APPEND: "an observer appended to the session while an append was being delivered",
  SESSION_ALREADY_EXISTS: "a session with this id already exists",
  SESSION_NOT_FOUND: "no session has this id",
  SESSION_NOT_LIVE: "the session was released; it can no longer be appended to",
  INVALID_BOUNDARY: "a fork point is not a completed turn's end",
  OPEN_TURN: "the operation needs a closed turn but one is open",
  SESSION_LOCKED: "another process is writing this session",
  UNSUPPORTED_VERSION: "the log was written by a newer format version",
  CORRUPT_LOG: "a line of the log cannot be read (the line number is reported)",
  OUT_OF_SEQUENCE: "a stored batch does not continue the log",
  NO_PERSISTENCE: "the session store has no persistence backend",
  PERSISTENCE_FAILED: "writing or syncing the log failed (disk full, read-only, permission); unsaved events are kept and retried",
  IO: "a storage operation failed",
  // the loop
  INVALID_ARGS: "tool arguments do not match the tool's schema (reported to the model)",
  DUPLICATE_TOOL: "two tools share a name",
  INVALID_CONFIG: "the tool runtime's configuration is invalid",
  TOOL_SCHEDULER: "the tool scheduler could not log a call or result; the turn fails",
  INVALID_OPTIONS: "the agent's options are invalid",
  INVALID_INPUT: "a send, steer or inject carries invalid content",
  DISPOSED: "the agent was disposed",
  APPROVAL_FAILED: "the approval service could not answer",
  ACP_REQUEST_FAILED: "an ACP request of the editor failed (invalid parameters, an unknown session, a prompt while one runs, a failed turn)",
  INVALID_PREFIX: "a session prefix (pre-seeded history) is malformed",
  MISSING_VARIABLE: "a system-prompt template uses a variable that has no value",
  UNKNOWN_VARIABLE: "a system-prompt template names an undeclared variable",
  MALFORMED_TEMPLATE: "a system-prompt template cannot be parsed",
  SECTION_FAILED: "a system-prompt section function failed",
  DUPLICATE_SECTION: "two system-prompt sections share an id",
  DUPLICATE_VARIABLE: "two system-prompt variables share a name",
  INVALID_ORDER: "a system-prompt section order is invalid",
  INVALID_VARIABLE_NAME: "a system-prompt variable name is invalid",
  INVALID_TOOL_ORDER: "the tool order of the system prompt is invalid",
  UNKNOWN_TOOL_IN_ORDER: "the tool order names a tool that does not exist",
  RESERVED_TOOL_NAME: "a tool uses a name the harness reserves",
  // built-in tools (reported to the model as the tool's error result)
  OUTSIDE_WORKSPACE: "the path is outside the workspace",
  NOT_FOUND: "the file or directory does not exist",
  NOT_A_FILE: "the path is not a regular file",
  NOT_A_DIRECTORY: "the path is not a directory",
  BINARY_FILE: "the file is binary",
  FILE_TOO_LARGE: "the file is larger than the tool reads",
  PERMISSION_DENIED: "the operating system denied access",
  INVALID_PATTERN: "the glob or regular expression is invalid",
  NO_MATCH: "the text to replace was not found",
  AMBIGUOUS_MATCH: "the text to replace occurs more than once",
  NO_CHANGE: "the edit would not change the file",
  NOT_UTF8: "the file is not valid UTF-8; edit refuses to rewrite it (its bytes would change)",
  COMMAND_TIMEOUT: "the command ran past its timeout and was killed",
  SEARCH_TIMEOUT: "the search ran past its timeout",
  SPAWN_FAILED: "the command could not be started",
  IO_ERROR: "reading or writing the file failed",
  ESCAPE: "a path resolves (through a link) outside the workspace",
  // settings and MCP
  HOME_WORKSPACE: "the workspace is `/` or contains a home directory and was not accepted (`--allow-home-workspace` or an interactive yes)",
  INVALID_SETTINGS: "a settings file is not valid JSON or breaks its schema (file and line reported)",
  UNTRUSTED_FILE: "an approvals file of the harness is not private to the user (another owner, writable by others, a link); it is ignored",
  SHELL_PARSER_UNAVAILABLE: "the bash parser (tree-sitter) could not load; every command counts as unknowable to permission rules",
  PRIVATE_FILE_FAILED: "an approvals file of the harness could not be read or written",
  MCP_CONNECT_FAILED: "an MCP server could not be started, reached or initialised",
  MCP_TIMEOUT: "an MCP server did not answer in time",
  MCP_SERVER_ERROR: "an MCP server answered with an error",
  MCP_PROTOCOL_ERROR: "an MCP server broke the protocol",
  // checkpoints and rewind (issue 33)
  CHECKPOINT_IO: "the checkpoint journal, its store or the workspace could not be read or written (the change is not made)",
  REWIND_CONFLICT: "files changed outside the agent since the checkpoint, or too large to have been kept; they are listed and nothing is restored without --force",
  REWIND_TARGET: "the turn to rewind to does not exist or has not ended"
}

/** Where errors of a class surface when they are not turn failures (the exit column is left out for them). */
const surfaces: Readonly<Record<string, string>> = {
  BuiltinToolError: "The model sees it as the tool's error result; the turn goes on.",
  ToolArgsError: "The model sees it as the tool's error result; the turn goes on.",
  McpServerError: "The model sees it as the tool's error result; the turn goes on.",
  McpTimeoutError: "As the tool's error result during a call; at start-up the server is reported unavailable on stderr.",
  McpConnectError: "At start-up: the server is reported unavailable on stderr and its tools are left out.",
  McpProtocolError: "The server is reported on stderr; a call in flight fails as the tool's error result.",
  ScriptError: "At start-up: the CLI prints the field and line on stderr and exits 2.",
  HomeWorkspaceError: "At start-up: the CLI prints it as one line on stderr and exits 2.",
  SettingsError: "At start-up: the CLI prints the file and line on stderr and exits 2.",
  CliError: "Printed as one line on stderr; the CLI exits with the error's own exit code.",
  RetryPolicyError: "When the adapter layer is built (a configuration error).",
  AgentOptionsError: "When the agent is made (a configuration error).",
  DuplicateToolError: "When the agent is made (a configuration error).",
  ToolConfigError: "When the agent is made (a configuration error).",
  SessionPrefixError: "When the agent is made (a configuration error).",
  JsonError: "Where a value enters the log or a request; the enclosing operation fails with it.",
  AcpError: "Sent to the editor as the JSON-RPC error of its request (`harness acp`); the agent goes on serving.",
  CheckpointIoError: "As the tool's error result when the pre-image cannot be kept (the change is not made); from `sessions rewind` as one line on stderr, exit 4.",
  RewindConflictError: "From `sessions rewind` and `/rewind`: one line listing the files, exit 4; nothing changed.",
  RewindTargetError: "From `sessions rewind` and `/rewind`: one line, exit 2."
}

/** Codes the loop writes into turn ends and tool results without an error class of their own. */
const loopCodes: ReadonlyArray<readonly [code: string, meaning: string]> = [
  ["UNKNOWN_TOOL", "the model called a tool that does not exist (reported to the model)"],
  ["TOOL_TIMEOUT", "a tool ran past its timeout (reported to the model)"],
  ["INTERRUPTED", "a tool call was cut short by cancellation or a crash (placeholder result)"],
  ["COMPACTION_SUMMARY_FAILED", "the summary request of a compaction failed"],
  ["COMPACTION_NOTHING_TO_DO", "there is nothing old enough to compact"],
  ["COMPACTION_STALLED", "compaction could not bring the context under the limit"]
]

const classPattern = /export class (\w+) extends Schema\.TaggedError(?:Class)?<\w+>\(\)\("(\w+)"/g

const literalsIn = (text: string): ReadonlyArray<string> => [...text.matchAll(/"([A-Z][A-Z0-9_]*)"/g)].map((m) => m[1]!)

/** The text of `Schema.Literal(…)` / `Schema.Literals([…])` starting at `from`, up to its closing parenthesis. */
const literalCall = (text: string, from: number): string => {
  const open = text.indexOf("(", from)
  return text.slice(open, text.indexOf(")", open) + 1)
}

const codesOf = (source: Source, body: string): ReadonlyArray<string> => {
  const property = [...body.matchAll(/readonly code = "([A-Z_]+)"/g)].map((m) => m[1]!)
  if (property.length > 0) return property
  const inline = body.search(/\bcode: Schema\.Literals?\(/)
  if (inline >= 0) return literalsIn(literalCall(body, inline))
  const named = /\bcode: (\w+),/.exec(body)?.[1]
  if (named === "ProviderErrorCode") return [...LlmError.canonicalCodes, "HTTP_<status>", "<provider code>"]
  if (named !== undefined) {
    const at = new RegExp(`export const ${named} = Schema\\.Literals?\\(`).exec(source.text)?.index
    if (at !== undefined) return literalsIn(literalCall(source.text, at))
  }
  return []
}

/** The first sentence of the doc comment right before `index`. */
const summaryBefore = (text: string, index: number): string => {
  const start = text.lastIndexOf("/**", index)
  const comment = text.slice(start + 3, text.lastIndexOf("*/", index))
  const prose = comment.split("\n").map((l) => l.replace(/^\s*\*\s?/, "")).filter((l) => !l.startsWith("@")).join(" ")
  return prose.trim().replace(/\s+/g, " ").split(/(?<=\.)\s/)[0] ?? ""
}

/** Every typed error class in `sources`, in path order. */
export const errorClasses = (sources: ReadonlyArray<Source>): ReadonlyArray<ErrorClass> =>
  sources.flatMap((source) =>
    [...source.text.matchAll(classPattern)].map((m) => {
      const rest = source.text.slice(m.index)
      const end = /\n\}\) \{\}\n|\n\}\n/.exec(rest)
      const body = end === null ? rest : rest.slice(0, end.index + end[0].length)
      return { tag: m[2]!, path: source.path, summary: summaryBefore(source.text, m.index), codes: codesOf(source, body) }
    })
  )

/** The CLI's exit code when a turn ends in error with `code`. */
const exitCode = (code: string): number =>
  TurnOutcome.outcome({ kind: "error", step: 1, code: code === "HTTP_<status>" ? "HTTP_500" : code, message: "" }).exitCode

const retried = (code: string): string => {
  const concrete = code === "HTTP_<status>" ? "HTTP_500" : code === "<provider code>" ? "provider_specific" : code
  return LlmError.isRetryable(new LlmError.ProviderError({ code: LlmError.toCode(concrete), message: "" })) ? "yes" : "no"
}

const escapeCell = (text: string): string => text.replace(/\|/g, "\\|").replace(/\n/g, " ")

const meaning = (code: string): string => {
  const text = meanings[code]
  if (text === undefined) throw new Error(`scripts/ErrorCatalog.ts: no meaning written for error code ${code}`)
  return escapeCell(text)
}

/** The catalog's markdown body (after the generated header). */
export const render = (sources: ReadonlyArray<Source>): string => {
  const classes = errorClasses(sources)
  const sections = classes.map((c) => {
    const provider = c.tag === "ProviderError"
    const head = provider ? "| code | meaning | retried | exit |\n|---|---|---|---:|" : "| code | meaning | exit if a turn ends with it |\n|---|---|---:|"
    const rows = c.codes.map((code) =>
      provider
        ? `| \`${code}\` | ${meaning(code)} | ${retried(code)} | ${exitCode(code)} |`
        : `| \`${code}\` | ${meaning(code)} | ${exitCode(code)} |`
    )
    const surface = surfaces[c.tag]
    const plain = `| code | meaning |\n|---|---|\n${c.codes.map((code) => `| \`${code}\` | ${meaning(code)} |`).join("\n")}`
    const table = c.codes.length === 0
      ? "No code of its own.\n"
      : `${surface === undefined ? `${head}\n${rows.join("\n")}` : plain}\n`
    return `## ${c.tag}\n\n${escapeCell(c.summary)} Defined in \`${c.path}\`.${surface === undefined ? "" : ` ${surface}`}\n\n${table}`
  })
  const loopMissing = loopCodes.filter(([code]) => !sources.some((s) => s.text.includes(`"${code}"`)))
  if (loopMissing.length > 0) throw new Error(`scripts/ErrorCatalog.ts: loop codes no longer in src: ${loopMissing.map(([c]) => c).join(", ")}`)
  const loop = `## Codes in turn ends and tool results\n\nCodes the loop writes into a \`turn/end\` error reason or an error \`tool/result\` without an error class of its own.\n\n| code | meaning | exit if a turn ends with it |\n|---|---|---:|\n${
    loopCodes.map(([code, text]) => `| \`${code}\` | ${escapeCell(text)} | ${exitCode(code)} |`).join("\n")
  }\n`
  return [...sections, loop].join("\n")
}
