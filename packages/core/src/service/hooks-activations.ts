/**
 * Which authorizations a committed change set made active, for the `onActivate` hook.
 */
import type { UserAggregate } from '../store/records'
import type { AssignedIds, ChangeSet } from '../store/contract'
import { iso, type Authorization } from './views'

/** The authorizations that are `active` after the commit and were not before it. */
export function activationsIn(loaded: UserAggregate | null, changes: ChangeSet, ids: AssignedIds): Authorization[] {
  const write = changes.user
  if (!write) return []
  const userId = write.op === 'update' ? write.user.id : (ids.userId as number)
  const wasActive = new Set((loaded?.authorizations ?? []).filter((a) => a.status === 'active').map((a) => a.id))
  const out: Authorization[] = []
  const view = (a: Omit<Authorization, 'startAt' | 'endAt' | 'createdAt' | 'updatedAt'> & { startAt: number; endAt: number | null; createdAt: number; updatedAt: number }): Authorization => ({
    ...a,
    startAt: iso(a.startAt),
    endAt: a.endAt === null ? null : iso(a.endAt),
    createdAt: iso(a.createdAt),
    updatedAt: iso(a.updatedAt),
  })
  write.insertAuthorizations.forEach((a, i) => {
    if (a.status === 'active') out.push(view({ ...a, id: ids.authorizationIds[i] as number, userId }))
  })
  if (write.op === 'update') {
    for (const a of write.updateAuthorizations) {
      if (a.status === 'active' && !wasActive.has(a.id)) out.push(view(a))
    }
  }
  return out
}
