/**
 * The load → plan → commit cycle every writing operation runs, and the hook caller.
 *
 * @module
 */
import { ScanAuthError } from '../errors'
import { activationsIn } from './hooks-activations'
import type { Plan } from '../operations/plan'
import type { ResolvedOptions } from './options'
import type { UserAggregate } from '../store/records'
import type { Store } from '../store/contract'

/** How many times one operation loads and plans again after losing a commit race. */
const MAX_ATTEMPTS = 100

/** One attempt of an operation: the user it loaded (for the activation hook) and its plan. */
export interface Attempt<R> {
  user: UserAggregate | null
  plan: Plan<R>
}

/**
 * Runs one operation: load and plan with `attempt`, commit, and again on conflict. `attempt` is told
 * the round (0 for the first), so that it may reuse what was read before the loop in round 0.
 */
export type CommitLoop = <R>(attempt: (round: number) => Promise<Attempt<R>>) => Promise<R>

/** Load → plan → commit, again on conflict, until it commits or `MAX_ATTEMPTS` is reached. */
export function makeCommitLoop(store: Store, config: ResolvedOptions): CommitLoop {
  return async function commitLoop<R>(attempt: (round: number) => Promise<Attempt<R>>): Promise<R> {
    for (let round = 0; round < MAX_ATTEMPTS; round++) {
      const { user, plan } = await attempt(round)
      if (plan.changes === null) return plan.finish(null)
      const outcome = await store.commit(plan.changes)
      if (outcome.ok) {
        const result = plan.finish(outcome.ids)
        if (config.hooks.onActivate) {
          for (const authorization of activationsIn(user, plan.changes, outcome.ids)) {
            callHook(config, () => config.hooks.onActivate?.({ authorization }))
          }
        }
        return result
      }
      // Someone else won this aggregate: wait a little (jittered, growing) and plan again on fresh data.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(25, 1 + round)))
    }
    throw new ScanAuthError('conflict', 'Too many concurrent changes to the same scene or user; nothing was changed')
  }
}

/** Calls a hook; a throwing hook never fails the operation that already committed. */
export function callHook(config: ResolvedOptions, call: () => void): void {
  try {
    call()
  } catch (error) {
    try {
      config.hooks.onHookError?.(error)
    } catch {
      // A failing error hook has nowhere left to report to.
    }
  }
}
