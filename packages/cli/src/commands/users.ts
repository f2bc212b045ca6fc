/**
 * Helpers of the commands that take an openid: finding the user (never creating one), reading a
 * whole ledger page by page, and a user's live sessions through the store's `listLiveSessions`.
 *
 * @module
 */
import type { LedgerEntry, ScanAuth, SessionRecord, UserInfo } from '@scanauth/core'
import { ScanAuthCliError } from '../errors'
import { storeMethod, type OpenedStore } from '../opened-store'

/** The largest page `listLedger` answers. */
export const LEDGER_PAGE = 1000

/** The largest page `listLiveSessions` is asked for. */
const SESSION_PAGE = 1000

/** A user's live sessions: how many, and the latest few (highest id first). */
export interface LiveSessions {
  /** How many of the user's sessions are live (`expiresAt > now`). */
  live: number
  /** The latest of them, newest first. */
  latest: SessionRecord[]
}

/**
 * The user's sessions live at `now`: the latest `latest` of them (the store's first page, newest
 * first), and how many there are (the pages after it, counted).
 */
export async function liveSessionsOf(opened: OpenedStore, userId: number, now: number, latest: number): Promise<LiveSessions> {
  const list = storeMethod(opened.store, 'listLiveSessions', opened.label, "list a user's live sessions")
  const first = await list({ userId, now, limit: latest })
  let live = first.length
  let page = first
  let size = latest
  while (page.length === size && page.length > 0) {
    page = await list({ userId, now, beforeId: (page[page.length - 1] as SessionRecord).id, limit: SESSION_PAGE })
    size = SESSION_PAGE
    live += page.length
  }
  return { live, latest: first }
}

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
