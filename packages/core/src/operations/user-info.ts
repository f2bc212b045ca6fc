/**
 * `getUser`: a user as the rules see it at `now`, computed from what is stored and written back
 * nowhere (docs/behaviour.md, B-user-1, B-user-2).
 */
import type { UserAggregate } from '../store/records'
import { isValid, latestActive } from '../rules/authorizations'
import { userView, type UserInfo } from '../service/views'

/**
 * The current authorization is the `active` one with the highest id when it is still valid at
 * `now` (an invalid one counts as absent, as everywhere); the queue is every `pending` one in
 * activation order. Nothing is activated or retired: the next operation that runs the activation
 * step does that, and writes it to the ledger.
 */
export function describeUser(aggregate: UserAggregate, now: number): UserInfo {
  const active = latestActive(aggregate.authorizations)
  const current = active !== undefined && isValid(active, now) ? active : null
  // The store loads authorizations in activation order already.
  const queue = aggregate.authorizations.filter((a) => a.status === 'pending')
  return userView(aggregate.user, current, queue)
}
