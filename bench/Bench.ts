/**
 * Benchmark helpers: every measurement is printed as one JSON line
 * `{"bench", "unit", "value", "baseline", "ratio"}` with the baseline measured in the same run.
 * `ratio = value / baseline` for throughputs (higher is better) and `value / baseline` for times
 * (lower is better); `unit` says which.
 */

/** One measurement against its same-run baseline. */
export interface Result {
  readonly bench: string
  readonly unit: string
  readonly value: number
  readonly baseline: number
  readonly ratio: number
  readonly [extra: string]: string | number
}

/** Prints a result as one JSON line. */
export const report = (result: {
  readonly bench: string
  readonly unit: string
  readonly value: number
  readonly baseline: number
  readonly ratio?: number
  readonly [extra: string]: string | number | undefined
}): void => {
  const ratio = result.ratio ?? result.value / result.baseline
  process.stdout.write(`${JSON.stringify({ ...result, ratio: Math.round(ratio * 1000) / 1000 })}\n`)
}

/** Median of a list of numbers. */
export const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  const m = Math.floor(s.length / 2)
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2
}

/** Times an async function `runs` times after one warm-up; returns the median milliseconds. */
export const timeMs = async (runs: number, f: () => Promise<unknown> | unknown): Promise<number> => {
  await f()
  const times: Array<number> = []
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now()
    await f()
    times.push(performance.now() - t0)
  }
  return median(times)
}
