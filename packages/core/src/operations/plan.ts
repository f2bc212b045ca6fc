/**
 * A plan: what an operation would write and what it answers once the write is in. Operations are
 * pure functions from loaded records and `now` to a plan; the service commits the change set and
 * calls `finish` with the ids the store assigned.
 */
import type { AssignedIds, ChangeSet } from '../store'

export interface Plan<R> {
  /** What to commit; null when the operation only reads. */
  changes: ChangeSet | null
  /** The operation's result, given the ids assigned by the commit (null when nothing was committed). */
  finish(ids: AssignedIds | null): R
}

/** A plan that writes nothing and answers `result`. */
export function answer<R>(result: R, changes: ChangeSet | null = null): Plan<R> {
  return { changes, finish: () => result }
}

/** A change set holding only the parts that are set, or null when there is nothing to write. */
export function changeSet(parts: ChangeSet): ChangeSet | null {
  const out: ChangeSet = {}
  if (parts.scene) out.scene = parts.scene
  if (parts.user) out.user = parts.user
  if (parts.session) out.session = parts.session
  return out.scene || out.user || out.session ? out : null
}
