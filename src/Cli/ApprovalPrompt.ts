/**
 * The CLI's terminal approval prompt (a {@link Approval.Prompt} over a readable and a writable stream):
 * type-ahead is discarded: on a terminal, whatever was typed before the question appears is read and thrown
 * away during a short settle window ({@link DEFAULT_DISCARD_MS}) before the question is printed, so a `y`
 * typed early cannot answer it; `v` prints the whole call; end of input answers "cancelled".
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Approval from "../Policy/Approval.js"

/**
 * How long typed-ahead input is read and discarded before a question on a terminal (ms).
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_DISCARD_MS = 150

/**
 * Parses an answer line (`v` is handled by the prompt).
 *
 * @since 0.1.0
 * @category utils
 */
export const parseAnswer = (line: string, offersRule: boolean): Approval.Answer => {
  const a = line.trim().toLowerCase()
  if (a === "y" || a === "yes") return true
  if (offersRule && (a === "a" || a === "always")) return "always-session"
  if (offersRule && a === "p") return "always-project"
  return false
}

/**
 * A terminal prompt over a readable and a writable stream (e.g. `process.stdin` and
 * `process.stderr`): discards type-ahead (on a TTY, for `discardMs`), prints the question and
 * reads answer lines (`v` prints the whole call and asks again). End of input → cancelled.
 * Interruption closes the prompt. A chat UI that owns the terminal passes its own `Approval.Prompt`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const terminalPrompt = (
  input: NodeJS.ReadableStream & { readonly isTTY?: boolean },
  output: NodeJS.WritableStream,
  options: { readonly discardMs?: number } = {}
): Approval.Prompt => Object.assign(terminalAsk(input, output, options), { answersAlways: true })

const terminalAsk = (
  input: NodeJS.ReadableStream & { readonly isTTY?: boolean },
  output: NodeJS.WritableStream,
  options: { readonly discardMs?: number }
) =>
(question: string, details?: Approval.Rendered) =>
  Effect.callback<Approval.Answer>((resume) => {
    const discardMs = options.discardMs ?? (input.isTTY === true ? DEFAULT_DISCARD_MS : 0)
    const offersRule = details?.rule !== undefined
    const keys = `[y${offersRule ? "/a/p" : ""}${details !== undefined && details.hidden > 0 ? "/v" : ""}/N]`
    let phase: "discard" | "ask" | "done" = "discard"
    let buffer = ""
    let timer: ReturnType<typeof setTimeout> | undefined
    const cleanup = () => {
      phase = "done"
      if (timer !== undefined) clearTimeout(timer)
      input.off("data", onData)
      input.off("end", onEnd)
      input.off("close", onEnd)
      input.pause()
    }
    const finish = (answer: Approval.Answer) => {
      if (phase === "done") return
      cleanup()
      resume(Effect.succeed(answer))
    }
    const handle = (line: string) => {
      if (line.trim().toLowerCase() === "v" && details !== undefined) {
        output.write(`${details.full}\n${keys} `)
        return
      }
      finish(parseAnswer(line, offersRule))
    }
    function onData(chunk: string | Buffer) {
      if (phase !== "ask") return
      buffer += typeof chunk === "string" ? chunk : chunk.toString("utf8")
      for (let nl = buffer.indexOf("\n"); nl >= 0 && phase === "ask"; nl = buffer.indexOf("\n")) {
        const line = buffer.slice(0, nl).replace(/\r$/, "")
        buffer = buffer.slice(nl + 1)
        handle(line)
      }
    }
    function onEnd() {
      finish(undefined)
    }
    const ask = () => {
      if (phase !== "discard") return
      phase = "ask"
      buffer = ""
      output.write(`${question} ${keys} `)
    }
    input.on("data", onData)
    input.on("end", onEnd)
    input.on("close", onEnd)
    input.resume()
    // input that already ended never emits "end" again: answer at once
    if ((input as { readonly readableEnded?: boolean }).readableEnded === true) {
      finish(undefined)
      return Effect.sync(cleanup)
    }
    if (discardMs > 0) timer = setTimeout(ask, discardMs)
    else ask()
    return Effect.sync(cleanup)
  })
