/**
 * Helpers of the commands that take an openid: finding the user (never creating one) and reading a
 * whole ledger page by page.
 *
 * @module
 */
import type { LedgerEntry, ScanAuth, UserInfo } from '@scanauth/core'
import { ScanAuthCliError } from '../errors'

/** The largest page `listLedger` answers. */
export const LEDGER_PAGE = 1000

/** The user with this openid, or a `user_not_found` error. Reads only. */
export async function requireUser(auth: ScanAuth, openid: string): Promise<UserInfo> {
  const user = await auth.getUser({ openid })
  if (user === null) throw new ScanAuthCliError('user_not_found', `no user has the openid ${JSON.stringify(openid)}`)
  return user
}

/** Visits every ledger entry of a user, oldest first, a page at a time. */
export async function eachLedgerEntry(auth: ScanAuth, userId: number, visit: (entry: LedgerEntry) => void): Promise<void> {
  let afterId: number | null = 0
  while (afterId !== null) {
    const page = await auth.listLedger({ userId }, { afterId, limit: LEDGER_PAGE })
    page.entries.forEach(visit)
    afterId = page.nextAfterId
  }
}
