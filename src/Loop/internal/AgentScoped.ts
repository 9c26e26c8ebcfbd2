/**
 * Registrations that are global or scoped to one agent, looked up by agent id (issue 20): a lookup
 * touches the global entries and the agent's own ones, never another agent's, so a step costs the
 * same with 1 or 10,000 agents registered. The merged list of an agent is cached until a global
 * entry or one of its own changes, so a steady-state lookup is one `Map.get`.
 *
 * A single-writer mutable structure: changed only in synchronous sections (`Effect.sync`), so every
 * change is atomic; readers get immutable arrays that never change once returned.
 *
 * @since 0.1.0
 */

/**
 * One registration.
 *
 * @since 0.1.0
 * @category models
 */
export interface Entry<A> {
  /** registration order across every layer (ties in orderings go by it) */
  readonly id: number
  /** `undefined`: global */
  readonly agentId: string | undefined
  readonly value: A
}

interface Own<A> {
  entries: ReadonlyArray<Entry<A>>
  merged: ReadonlyArray<A> | undefined
  /** the global generation `merged` was built at */
  generation: number
}

/**
 * The registry.
 *
 * @since 0.1.0
 * @category models
 */
export interface Registry<A> {
  /** Adds a registration (global when `agentId` is undefined) and returns it. */
  readonly add: (value: A, agentId: string | undefined) => Entry<A>
  /** Removes a registration (no-op when already removed). */
  readonly remove: (entry: Entry<A>) => void
  /** The global entries, in registration order. */
  readonly global: () => ReadonlyArray<Entry<A>>
  /** The agent's own entries, in registration order (empty for `undefined`). */
  readonly own: (agentId: string | undefined) => ReadonlyArray<Entry<A>>
  /** Global values then the agent's own values, each in registration order (cached). */
  readonly values: (agentId: string | undefined) => ReadonlyArray<A>
  /** Entries looked at so far by lookups and changes (a structural cost counter for tests). */
  readonly scanned: () => number
}

const empty: ReadonlyArray<never> = Object.freeze([])

/**
 * A fresh, empty registry.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <A>(): Registry<A> => {
  let next = 0
  let scanned = 0
  let global: ReadonlyArray<Entry<A>> = empty
  let globalValues: ReadonlyArray<A> = empty
  let generation = 0
  const byAgent = new Map<string, Own<A>>()

  const values = (agentId: string | undefined): ReadonlyArray<A> => {
    const own = agentId === undefined ? undefined : byAgent.get(agentId)
    if (own === undefined) return globalValues
    if (own.merged === undefined || own.generation !== generation) {
      scanned += global.length + own.entries.length
      own.merged = Object.freeze([...globalValues, ...own.entries.map((e) => e.value)])
      own.generation = generation
    }
    return own.merged
  }

  return {
    add: (value, agentId) => {
      const entry: Entry<A> = { id: next++, agentId, value }
      if (agentId === undefined) {
        scanned += global.length
        global = Object.freeze([...global, entry])
        globalValues = Object.freeze(global.map((e) => e.value))
        generation++
      } else {
        const own = byAgent.get(agentId)
        scanned += own?.entries.length ?? 0
        if (own === undefined) byAgent.set(agentId, { entries: Object.freeze([entry]), merged: undefined, generation })
        else {
          own.entries = Object.freeze([...own.entries, entry])
          own.merged = undefined
        }
      }
      return entry
    },
    remove: (entry) => {
      if (entry.agentId === undefined) {
        scanned += global.length
        const kept = global.filter((e) => e !== entry)
        if (kept.length === global.length) return
        global = Object.freeze(kept)
        globalValues = Object.freeze(global.map((e) => e.value))
        generation++
        return
      }
      const own = byAgent.get(entry.agentId)
      if (own === undefined) return
      scanned += own.entries.length
      const kept = own.entries.filter((e) => e !== entry)
      if (kept.length === 0) byAgent.delete(entry.agentId)
      else {
        own.entries = Object.freeze(kept)
        own.merged = undefined
      }
    },
    global: () => {
      scanned += global.length
      return global
    },
    own: (agentId) => {
      const own = agentId === undefined ? undefined : byAgent.get(agentId)
      if (own === undefined) return empty
      scanned += own.entries.length
      return own.entries
    },
    values,
    scanned: () => scanned
  }
}
