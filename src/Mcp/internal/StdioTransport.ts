/**
 * An MCP stdio client transport whose server runs as the leader of its own process group.
 *
 * The SDK's `StdioClientTransport` spawns the server in the harness's process group and, on close,
 * signals only the direct child; a server started through `npx`, a shell or a wrapper leaves its
 * grandchildren running. This transport keeps the SDK's message format (`serializeMessage`,
 * `deserializeMessage`: newline-delimited JSON-RPC) and changes process management and one thing
 * of the framing: a message over 10 MiB (`LineFraming`, issue 26) is dropped and fails the request
 * it answers with an error response, where the SDK's `ReadBuffer` throws an uncaught exception.
 * Process management: `detached: true` (own group), and close = end stdin, wait `graceMs`, `SIGTERM` the
 * whole group, wait `graceMs`, `SIGKILL` the group. The child's stderr is drained into a bounded
 * tail (the last lines explain a crash) and never reaches the terminal.
 *
 * This class is the SDK boundary (a callback interface the SDK's `Client` drives); it holds no
 * Effect state.
 *
 * @since 0.1.0
 */
import { deserializeMessage, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { ErrorCode, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { type ChildProcess, spawn } from "node:child_process"
import { LineFraming, MAX_MESSAGE_BYTES } from "./LineFraming.js"

/**
 * What to spawn.
 *
 * @since 0.1.0
 * @category models
 */
export interface Params {
  readonly command: string
  readonly args: ReadonlyArray<string>
  /** the complete environment of the child */
  readonly env: Readonly<Record<string, string>>
  readonly cwd: string
  /** wait between stdin end, SIGTERM and SIGKILL (ms) */
  readonly graceMs: number
}

const STDERR_TAIL_BYTES = 4096

const killGroup = (pid: number, signal: NodeJS.Signals): void => {
  try {
    process.kill(-pid, signal)
  } catch {
    // ESRCH: the group is gone already
  }
}

/**
 * The transport (see the module doc).
 *
 * @since 0.1.0
 * @category models
 */
export class GroupStdioTransport implements Transport {
  onclose?: (() => void) | undefined
  onerror?: ((error: Error) => void) | undefined
  onmessage?: (<T extends JSONRPCMessage>(message: T) => void) | undefined
  private child: ChildProcess | undefined
  private readonly buffer = new LineFraming()
  private stderrTail = ""
  private exited: Promise<void> | undefined

  constructor(private readonly params: Params) {}

  /** the child's pid once started */
  get pid(): number | undefined {
    return this.child?.pid
  }

  /** the last few KiB the server wrote on stderr */
  get stderr(): string {
    return this.stderrTail
  }

  start(): Promise<void> {
    if (this.child !== undefined) return Promise.reject(new Error("transport already started"))
    return new Promise((resolve, reject) => {
      const child = spawn(this.params.command, [...this.params.args], {
        env: { ...this.params.env },
        cwd: this.params.cwd,
        stdio: ["pipe", "pipe", "pipe"],
        detached: true,
        shell: false
      })
      this.child = child
      this.exited = new Promise((done) => child.once("close", () => done()))
      child.once("error", (error) => {
        reject(error)
        this.onerror?.(error)
      })
      child.once("spawn", () => resolve())
      child.once("close", () => {
        this.child = undefined
        this.onclose?.()
      })
      child.stdin?.on("error", (error) => this.onerror?.(error))
      child.stdout?.on("data", (chunk: Buffer) => {
        for (const framed of this.buffer.append(chunk)) {
          if (framed._tag === "TooLong") {
            this.tooLong(framed.bytes, framed.id)
            continue
          }
          let message: JSONRPCMessage
          try {
            message = deserializeMessage(framed.text)
          } catch (error) {
            this.onerror?.(error instanceof Error ? error : new Error(String(error)))
            continue
          }
          this.onmessage?.(message)
        }
      })
      child.stderr?.on("data", (chunk: Buffer) => {
        const next = this.stderrTail + chunk.toString("utf8")
        this.stderrTail = next.length > STDERR_TAIL_BYTES ? next.slice(next.length - STDERR_TAIL_BYTES) : next
      })
    })
  }

  /**
   * An answer over the message limit was dropped: the request it answers (when its id could be
   * read) fails with an error response naming the size; otherwise it is reported as an error.
   */
  private tooLong(bytes: number, id: string | number | undefined): void {
    const message = `the server sent a message of ${bytes} bytes, over the stdio transport's limit of ${MAX_MESSAGE_BYTES} bytes; it was dropped`
    if (id === undefined) {
      this.onerror?.(new Error(message))
      return
    }
    this.onmessage?.({ jsonrpc: "2.0", id, error: { code: ErrorCode.InternalError, message } })
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.child?.stdin
      if (stdin === undefined || stdin === null || stdin.destroyed) {
        reject(new Error("not connected"))
        return
      }
      if (stdin.write(serializeMessage(message))) resolve()
      else stdin.once("drain", () => resolve())
    })
  }

  async close(): Promise<void> {
    const child = this.child
    const exited = this.exited
    this.buffer.clear()
    if (child === undefined || exited === undefined || child.pid === undefined) return
    const pid = child.pid
    const wait = (ms: number) =>
      Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref())])
    try {
      child.stdin?.end()
    } catch {
      // the pipe is already closed
    }
    if (!(await wait(this.params.graceMs))) {
      killGroup(pid, "SIGTERM")
      if (!(await wait(this.params.graceMs))) {
        killGroup(pid, "SIGKILL")
        await wait(this.params.graceMs)
      }
    }
    // the leader may be gone while members of its group linger
    killGroup(pid, "SIGKILL")
  }
}
