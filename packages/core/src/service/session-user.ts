/**
 * The fallback of a session check (docs/behaviour.md, B-load-2) for a store that does not know
 * `LoadQuery.userOfSession`.
 *
 * @module
 */
import type { UserAggregate } from '../store/records'
import type { Store } from '../store/contract'

/**
 * The user of a live session whose load came back without one: a store written before
 * `LoadQuery.userOfSession` ignores the flag, so core reads the user by id, a second round trip,
 * as it did before. Users are never deleted, so a scanauth store never takes this path.
 */
export async function userOfSessionFallback(store: Store, userId: number): Promise<UserAggregate | null> {
  return (await store.load({ userId })).user
}
