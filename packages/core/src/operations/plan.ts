/**
 * A plan: what an operation would write and what it answers once the write is in. Operations are
 * pure functions from loaded records and `now` to a plan; the service commits the change set and
 * calls `finish` with the ids the store assigned.
 */
import { ledgerEntries, type LedgerContext } from '../rules/ledger'
import { toUserWrite, type UserDraft } from '../rules/user'
import type { AssignedIds, ChangeSet } from '../store/contract'

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
  if (parts.ledger && parts.ledger.length > 0) out.ledger = parts.ledger
  if (parts.idempotency) out.idempotency = parts.idempotency
  return out.scene || out.user || out.session || out.idempotency ? out : null
}

/**
 * The user part of a change set: the user write (null when nothing changed) and the ledger entries
 * that describe it, which always travel in the same commit.
 */
export function userParts(draft: UserDraft, context: LedgerContext): Pick<ChangeSet, 'user' | 'ledger'> {
  const user = toUserWrite(draft)
  if (user === null) return {}
  return { user, ledger: ledgerEntries(draft, context) }
}
