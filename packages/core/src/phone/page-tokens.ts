/**
 * The CSRF tokens of the plans pages (docs/behaviour.md, B-phone-5), kept in the store's counters,
 * which every store has: a page token works only if this service issued it, only for the person it
 * was shown to, and only while it belongs to the page that person was shown last.
 *
 * A token is `<claims>.<secret>`: the claims (base64url JSON: the openid, the ticket digest of the
 * waiting device, the page's window and number) say whom and what the page served; the secret, 32
 * random bytes, makes it unguessable. Pages are numbered within windows of {@link PHONE_PAGE_TTL_MS}
 * on the clock (window w is `[w·TTL, (w+1)·TTL)`), since a counter's life is fixed when it is created
 * and cannot be extended: a count that simply expired would start again at 1 and leave the page shown
 * before it buying. Three counters:
 * - `phone:page:<digest of the token>`, set when the page is shown, living {@link PHONE_PAGE_TTL_MS}:
 *   the token is ours, claims included (a changed claim changes the digest, which names nothing);
 * - `phone:pages:<digest of the openid>:<w>`, the person's page count in window w: each page takes
 *   the next number. It lives until every page of its window has expired, so that the first page of
 *   the next window can read it (by adding one) and end the last page of this one;
 * - `phone:last:<digest of the openid>:<w>:<n>`, set for page n of window w, living
 *   {@link PHONE_PAGE_TTL_MS}, and deleted when the next page is shown: only the last page's forms buy.
 * A counter is read by adding one to it: a value of 1 means it was not there (and it is deleted
 * again), 2 or more that it was. A form may so be sent twice (a double tap), since the token stays
 * good until a newer page replaces it or its time runs out.
 *
 * @module
 */
import { ScanAuthError } from '../errors'
import { digestSecret } from '../rules/confirm'
import { PHONE_PAGE_TTL_MS } from '../rules/phone'
import { newSecret } from '../service/random'
import type { Store } from '../store/contract'

/** What a page token says about its page. */
export interface PageClaims {
  /** The person the page was shown to (WeChat OAuth identified them). */
  openid: string
  /** The digest of the ticket that named the waiting device, or null for a page without one. */
  ticketHash: string | null
  /** The window (of {@link PHONE_PAGE_TTL_MS}, on the clock) the page was shown in. */
  window: number
  /** The page's number among this person's pages of that window. */
  page: number
}

const UTF8 = new TextEncoder()
const FROM_UTF8 = new TextDecoder()

function encodeClaims(claims: PageClaims): string {
  const json = JSON.stringify({ o: claims.openid, t: claims.ticketHash, w: claims.window, n: claims.page })
  let binary = ''
  for (const byte of UTF8.encode(json)) binary += String.fromCharCode(byte)
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

/** The claims of a token's first part, or null when it is not one of ours in shape. */
function decodeClaims(encoded: string): PageClaims | null {
  try {
    const binary = atob(encoded.replace(/-/g, '+').replace(/_/g, '/'))
    const parsed: unknown = JSON.parse(FROM_UTF8.decode(Uint8Array.from(binary, (c) => c.charCodeAt(0))))
    if (typeof parsed !== 'object' || parsed === null) return null
    const { o, t, w, n } = parsed as Record<string, unknown>
    if (typeof o !== 'string' || o === '' || !(t === null || typeof t === 'string')) return null
    if (typeof w !== 'number' || !Number.isSafeInteger(w) || w < 0 || typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) return null
    return { openid: o, ticketHash: t, window: w, page: n }
  } catch {
    return null
  }
}

const tokenKey = (token: string) => `phone:page:${digestSecret(token)}`
const countKey = (openid: string, window: number) => `phone:pages:${digestSecret(openid)}:${window}`
const lastKey = (openid: string, window: number, page: number) => `phone:last:${digestSecret(openid)}:${window}:${page}`

/** The window of {@link PHONE_PAGE_TTL_MS} that `now` falls in. */
const windowOf = (now: number) => Math.floor(now / PHONE_PAGE_TTL_MS)
/** When the count of `window` may go: once the last page it numbered has expired. */
const countExpiry = (window: number) => (window + 2) * PHONE_PAGE_TTL_MS

/** Issues the token of a page just shown to `openid`, which replaces that person's previous page. */
export async function issuePageToken(store: Store, input: { openid: string; ticketHash: string | null }, now: number): Promise<string> {
  const { openid } = input
  const expiresAt = now + PHONE_PAGE_TTL_MS
  const window = windowOf(now)
  const page = await store.incrementCounter(countKey(openid, window), countExpiry(window), now)
  const token = `${encodeClaims({ openid, ticketHash: input.ticketHash, window, page })}.${newSecret()}`
  await store.incrementCounter(tokenKey(token), expiresAt, now)
  await store.incrementCounter(lastKey(openid, window, page), expiresAt, now)
  // The page before stops buying: only the page shown last counts (B-phone-5). The first page of a
  // window ends the last page of the window before, the only earlier one that can still be alive.
  if (page > 1) await store.deleteCounter(lastKey(openid, window, page - 1))
  else {
    const before = await store.incrementCounter(countKey(openid, window - 1), countExpiry(window - 1), now)
    if (before > 1) await store.deleteCounter(lastKey(openid, window - 1, before - 1))
    else await store.deleteCounter(countKey(openid, window - 1))
  }
  return token
}

/** Whether the counter `key` is there, read by adding one; one found missing is removed again. */
async function isSet(store: Store, key: string, now: number): Promise<boolean> {
  if ((await store.incrementCounter(key, now + PHONE_PAGE_TTL_MS, now)) > 1) return true
  await store.deleteCounter(key)
  return false
}

/**
 * The claims of a page token this service issued for the page its person was shown last, or
 * `phone_csrf_invalid` (403): a missing, made-up, changed, replaced or expired token (B-phone-5).
 */
export async function checkPageToken(store: Store, token: string, now: number): Promise<PageClaims> {
  const refuse = () => new ScanAuthError('phone_csrf_invalid', 'This page is out of date: open the link again')
  const dot = token.indexOf('.')
  const claims = dot > 0 ? decodeClaims(token.slice(0, dot)) : null
  if (claims === null || !/^[A-Za-z0-9_-]{43}$/.test(token.slice(dot + 1))) throw refuse()
  if (!(await isSet(store, tokenKey(token), now))) throw refuse()
  if (!(await isSet(store, lastKey(claims.openid, claims.window, claims.page), now))) throw refuse()
  return claims
}
