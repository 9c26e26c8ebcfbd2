/**
 * Compaction settings (K-3..K-9) and their defaults. Compaction is enabled per agent by passing
 * `compaction` in the agent options (an empty object takes every default).
 *
 * @since 0.1.0
 */

/**
 * Compaction settings.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** fraction of the window at which a threshold compaction runs (default 0.8) */
  readonly threshold?: number
  /** tokens kept free for the answer (default: the model's max output, capped at 20k) */
  readonly reserve?: number
  /** fraction of the window the kept tail holds at least (default 0.16) */
  readonly retain?: number
  /** fraction of the window under which the cheap pass suffices (default 0.6) */
  readonly pruneTarget?: number
  /** the context window, overriding the model catalog (e.g. `--context-window`) */
  readonly contextWindow?: number
  /** `maxTokens` of the summary request (default 8,192) */
  readonly maxTokens?: number
  /** at most this many compactions per turn (default 3) */
  readonly maxPerTurn?: number
  /** a compaction must remove at least this fraction of the pressure (default 0.1) */
  readonly minGain?: number
  /** the summary model (default: the conversation's own provider and model) */
  readonly summaryModel?: { readonly provider: string; readonly model: string }
  /** code points the recall tool returns at most (default 24,000) */
  readonly recallBudget?: number
}

/**
 * Settings with every default applied (the window and reserve still depend on the model).
 *
 * @since 0.1.0
 * @category models
 */
export interface Resolved {
  readonly threshold: number
  readonly reserve: number | undefined
  readonly retain: number
  readonly pruneTarget: number
  readonly contextWindow: number | undefined
  readonly maxTokens: number
  readonly maxPerTurn: number
  readonly minGain: number
  readonly summaryModel: { readonly provider: string; readonly model: string } | undefined
  readonly recallBudget: number
}

/**
 * The reserve cap (K-3).
 *
 * @since 0.1.0
 * @category constants
 */
export const RESERVE_CAP = 20_000

/**
 * Applies the defaults.
 *
 * @since 0.1.0
 * @category constructors
 */
export const resolve = (o: Options): Resolved => ({
  threshold: o.threshold ?? 0.8,
  reserve: o.reserve,
  retain: o.retain ?? 0.16,
  pruneTarget: o.pruneTarget ?? 0.6,
  contextWindow: o.contextWindow,
  maxTokens: o.maxTokens ?? 8_192,
  maxPerTurn: o.maxPerTurn ?? 3,
  minGain: o.minGain ?? 0.1,
  summaryModel: o.summaryModel,
  recallBudget: o.recallBudget ?? 24_000
})

/**
 * Checks the settings; returns a problem description or `undefined`.
 *
 * @since 0.1.0
 * @category utils
 */
export const problem = (o: Options): string | undefined => {
  const fraction = (name: string, v: number | undefined) =>
    v !== undefined && !(Number.isFinite(v) && v > 0 && v < 1) ? `compaction.${name} must be between 0 and 1` : undefined
  const count = (name: string, v: number | undefined) =>
    v !== undefined && !(Number.isSafeInteger(v) && v > 0) ? `compaction.${name} must be a positive integer` : undefined
  return fraction("threshold", o.threshold) ?? fraction("retain", o.retain) ?? fraction("pruneTarget", o.pruneTarget) ??
    fraction("minGain", o.minGain) ?? count("contextWindow", o.contextWindow) ?? count("maxTokens", o.maxTokens) ??
    count("maxPerTurn", o.maxPerTurn) ?? count("recallBudget", o.recallBudget) ??
    (o.reserve !== undefined && !(Number.isSafeInteger(o.reserve) && o.reserve >= 0)
      ? "compaction.reserve must be a non-negative integer"
      : undefined)
}
