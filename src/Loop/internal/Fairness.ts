/**
 * Event-loop fairness while agents run (issue 20). Effect 3's default scheduler ran fiber tasks in
 * microtasks and fell back to a timer only after 2,048 rounds per fiber, so many busy fibers (agents
 * streaming flat out, write completions resuming many fibers at once, a burst of turn starts) kept the
 * main thread in one microtask drain: Node's timers and I/O of everything else in the process (an HTTP
 * server, heartbeats, other agents' sockets) waited. Effect 4's default scheduler runs a fiber's tasks in a
 * `setImmediate`, and resumes a waiting fiber synchronously inside the callback that completes what it waits
 * for (I/O, `Deferred`, queues): such resumptions bypass any scheduler, so only yields and forks go through
 * {@link scheduler}. Whether it still beats Effect 4's default is open (decision 0023: measure `agents.n-*`
 * on a quiet machine); the per-batch {@link due} / {@link yieldNow} of the consumer stays either way.
 *
 * Two parts share one process-wide clock ({@link due}: {@link budgetMs} passed since the event loop last
 * got a turn, as far as this module knows):
 *
 * - {@link scheduler}: the scheduler the agent loop's fibers run on when `Scheduling.FairScheduler` is on
 *   (opt-in: it is shared by the whole process; the CLI turns it on). Tasks run in FIFO order in a
 *   microtask while the budget lasts; once it is spent the rest waits for the next event-loop turn (one
 *   shared `setImmediate`, after which timers and I/O callbacks get their chance) and runs there with a
 *   fresh budget. Fibers yield to it every {@link maxOpsBeforeYield} operations, so one fiber that never
 *   suspends is cut into tasks too. One `performance.now()` per task.
 * - {@link due} / {@link yieldNow}: a hot loop (the chunk consumer) checks once per batch and parks until
 *   the next turn, whatever scheduler its fiber runs on.
 *
 * Every waiter of a turn shares the one `setImmediate`, and the clock is refreshed once per turn: each
 * party gets a slice of the same budget instead of its own (a per-waiter clock lets N waiters run N
 * budgets back to back in one check phase).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Scheduler from "effect/Scheduler"
import * as Scheduling from "../Scheduling.js"

/**
 * Main-thread time after which the loop lets the event loop run (milliseconds).
 *
 * @since 0.1.0
 * @category constants
 */
export const budgetMs = 4

/**
 * Operations a fiber on {@link scheduler} runs before it goes back to the queue (a constant, as in v3).
 *
 * @since 0.1.0
 * @category constants
 */
export const maxOpsBeforeYield = 2048

/** When the event loop last got a turn, as far as this module knows (shared by the whole process). */
let lastTurn = performance.now()

/** Callbacks waiting for the next turn, and the one `setImmediate` that runs them. */
let waiting: Set<() => void> = new Set()
let armed = false

const turn = (): void => {
  armed = false
  lastTurn = performance.now()
  const ready = waiting
  waiting = new Set()
  for (const f of ready) f()
}

/** Runs `f` on the next event-loop turn (one shared `setImmediate` for every waiter). */
const onNextTurn = (f: () => void): void => {
  waiting.add(f)
  if (!armed) {
    armed = true
    setImmediate(turn)
  }
}

/**
 * `true` when {@link budgetMs} passed since the event loop last got a turn: the caller should yield
 * ({@link yieldNow}). One `performance.now()`; synchronous, so a hot loop pays no effect for it.
 *
 * @since 0.1.0
 * @category utils
 */
export const due = (): boolean => performance.now() - lastTurn >= budgetMs

/**
 * Resumes on the next event-loop turn (after timers and I/O callbacks get their chance), together with
 * every other waiter of that turn.
 *
 * @since 0.1.0
 * @category utils
 */
export const yieldNow: Effect.Effect<void> = Effect.callback<void>((resume) => {
  const f = () => resume(Effect.void)
  onNextTurn(f)
  return Effect.sync(() => {
    waiting.delete(f)
  })
})

const IDLE = 0
const MICRO = 1
const TURN = 2
const RUNNING = 3

/**
 * The time-budgeted dispatcher (see the module doc), one for the whole process: every fiber on
 * {@link scheduler} gets this same dispatcher, so tasks of all agents share one FIFO queue and one
 * budget. Task priorities are not ordered: tasks run in the order they were scheduled.
 *
 * Effect 4 port: Effect 4's scheduler is a `Context.Reference` (`Scheduler.Scheduler`) whose
 * `makeDispatcher()` is called once per fiber; the v3 `scheduleTask` queue becomes this dispatcher.
 */
class FairDispatcher implements Scheduler.SchedulerDispatcher {
  private queue: Array<() => void> = []
  private state: typeof IDLE | typeof MICRO | typeof TURN | typeof RUNNING = IDLE

  scheduleTask(task: () => void, _priority: number): void {
    this.queue.push(task)
    if (this.state === IDLE) this.schedule()
  }

  /** Runs everything queued now (Effect calls it for a synchronous run). */
  flush(): void {
    while (this.queue.length > 0) {
      const round = this.queue
      this.queue = []
      for (let i = 0; i < round.length; i++) round[i]!()
    }
  }

  private schedule(): void {
    if (due()) {
      this.state = TURN
      onNextTurn(this.run)
    } else {
      this.state = MICRO
      queueMicrotask(this.run)
    }
  }

  /**
   * One round: the tasks queued when it starts, in order, until the budget is spent (tasks they schedule
   * wait for the next round, so promise callbacks run in between).
   */
  private readonly run = (): void => {
    if (this.state !== MICRO && this.state !== TURN) return
    this.state = RUNNING
    const round = this.queue
    this.queue = []
    let i = 0
    try {
      while (i < round.length) {
        const task = round[i++]!
        task()
        if (due()) break
      }
    } finally {
      if (i < round.length) this.queue = round.slice(i).concat(this.queue)
      this.state = IDLE
      if (this.queue.length > 0) this.schedule()
    }
  }
}

const dispatcher = new FairDispatcher()

class FairScheduler implements Scheduler.Scheduler {
  readonly executionMode = "async" as const
  shouldYield(fiber: { readonly currentOpCount: number }): boolean {
    return fiber.currentOpCount >= maxOpsBeforeYield
  }
  makeDispatcher(): Scheduler.SchedulerDispatcher {
    return dispatcher
  }
}

/**
 * The scheduler the agent loop runs its fibers on: fiber tasks run in microtasks while the
 * process-wide budget lasts, then wait for the next event-loop turn. Shared by every agent in the
 * process.
 */
export const scheduler: Scheduler.Scheduler = new FairScheduler()

/**
 * Runs `self` (and every fiber it forks) on {@link scheduler} when `Scheduling.FairScheduler` is on (it is
 * opt-in, see `Scheduling`), else as it is: Effect 4 takes the scheduler from the context
 * (`Scheduler.Scheduler` is a `Context.Reference`), so this is `provideService`.
 */
export const fair = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(Scheduling.FairScheduler, (on) => on ? Effect.provideService(self, Scheduler.Scheduler, scheduler) : self)
