/**
 * Every approval answer is logged (issue 34): {@link logged} wraps a prompt so that each answer to a
 * question about a call is appended to the session as an `approval/answer` event: the call and tool,
 * the answer (`yes`, `no`, `always-session`, `always-project`, `cancelled`), who answered
 * (`user`: the person at the terminal), the rule an "always" answer saved, and how long the call
 * waited (`waitMs`; `sessions stats` counts it as approval wait, not tool time).
 *
 * A log that cannot be written costs the record only: the failure is reported on stderr (one line)
 * and the answer stands.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type { Session } from "../Session/Session.js"
import type * as Approval from "../Policy/Approval.js"

/**
 * The logged name of an answer.
 *
 * @since 0.1.0
 * @category utils
 */
export const answerName = (answer: Approval.Answer): "yes" | "no" | "always-session" | "always-project" | "cancelled" =>
  answer === true ? "yes" : answer === false ? "no" : answer === undefined ? "cancelled" : answer

/**
 * `prompt`, with each answer appended to the session `session()` returns (none: not logged, e.g.
 * before the session opened).
 *
 * @since 0.1.0
 * @category constructors
 */
export const logged = (prompt: Approval.Prompt, session: () => Session | undefined): Approval.Prompt =>
  Object.assign(
    (question: string, details?: Approval.Rendered) =>
      Effect.gen(function*() {
        const askedAt = Date.now()
        const answer = yield* prompt(question, details)
        const target = session()
        if (target === undefined || details?.callId === undefined) return answer
        const name = answerName(answer)
        const rule = (name === "always-session" || name === "always-project") && details.rule !== undefined
          ? { rule: details.rule }
          : {}
        yield* target.append({
          type: "approval/answer",
          data: {
            callId: details.callId,
            tool: details.tool ?? "",
            answer: name,
            by: "user",
            ...rule,
            waitMs: Math.max(0, Date.now() - askedAt)
          }
        }).pipe(
          Effect.catch((e) =>
            Effect.sync(() => void process.stderr.write(`effect-harness: the approval answer was not logged: ${e.message}\n`))
          )
        )
        return answer
      }),
    prompt.answersAlways === undefined ? {} : { answersAlways: prompt.answersAlways }
  )
