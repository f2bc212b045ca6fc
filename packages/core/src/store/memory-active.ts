/**
 * The reminders' read of a `MemoryStore` (`Store.listActiveAuthorizations`, `reminder-reads.ts`):
 * the ids of the `active` authorizations, by type, kept in step with every write of an
 * authorization, and a page found by walking them. A memory store serves one process, so a walk of
 * the active ones and a sort of those that match is cheaper than a sorted index kept in step;
 * SQLite, PostgreSQL and Redis keep one.
 *
 * @module
 */
import type { AuthorizationRecord } from './records'
import type { ActiveAuthorizationQuery } from './reminder-reads'

/** By `endAt`, then id: the order of a time page. */
function byEnd(a: AuthorizationRecord, b: AuthorizationRecord): number {
  return (a.endAt as number) - (b.endAt as number) || a.id - b.id
}

/** Whether an active time authorization is in the query's window, after its cursor. */
function timeMatches(a: AuthorizationRecord, query: Extract<ActiveAuthorizationQuery, { type: 'time' }>): boolean {
  const end = a.endAt
  if (end === null || !(query.endFrom <= end && end < query.endBefore)) return false
  const { after } = query
  return after === undefined || end > after.endAt || (end === after.endAt && a.id > after.id)
}

/** The `active` authorizations of a memory store, by type (see the module comment). */
export class MemoryActiveAuthorizations {
  private readonly time = new Set<number>()
  private readonly points = new Set<number>()

  /** @param records Every authorization of the store, by id (the store's own map, read as it changes). */
  constructor(private readonly records: ReadonlyMap<number, AuthorizationRecord>) {}

  /** Files an authorization just written: among the active ones of its type, or nowhere. */
  file(a: AuthorizationRecord): void {
    this.time.delete(a.id)
    this.points.delete(a.id)
    if (a.status === 'active') (a.type === 'time' ? this.time : this.points).add(a.id)
  }

  /** The page `query` names, each record a copy (see `Store.listActiveAuthorizations`). */
  list(query: ActiveAuthorizationQuery): AuthorizationRecord[] {
    const found: AuthorizationRecord[] = []
    if (query.type === 'time') {
      for (const id of this.time) {
        const a = this.records.get(id) as AuthorizationRecord
        if (timeMatches(a, query)) found.push(a)
      }
      found.sort(byEnd)
    } else {
      const afterId = query.afterId ?? 0
      for (const id of this.points) {
        const a = this.records.get(id) as AuthorizationRecord
        if (id > afterId && 0 < a.remainingPoints && a.remainingPoints < query.pointsBelow) found.push(a)
      }
      found.sort((a, b) => a.id - b.id)
    }
    return found.slice(0, Math.max(0, query.limit)).map((a) => ({ ...a }))
  }
}
