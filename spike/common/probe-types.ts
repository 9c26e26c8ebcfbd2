/** What the many-agents probes of both sides take and report. */
export interface ProbeOptions {
  readonly agents: number
  readonly turns: number
  readonly chunks: number
  readonly batch: number
}

export interface ProbeResult extends ProbeOptions {
  readonly side: string
  readonly totalChunks: number
  readonly seconds: number
  /** main-thread CPU (schedstat) µs per chunk over the turns */
  readonly cpuMicrosPerChunk: number
  /** a 10 ms timer's p99 lateness under the streaming (`monitorEventLoopDelay({ resolution: 10 })`) */
  readonly timerP99Ms: number
  /** heap after the turns (agents alive and idle) minus before creating them, per agent */
  readonly idleHeapPerAgentBytes: number
}
