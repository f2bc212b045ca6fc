/**
 * The rate limits as pure functions (docs/behaviour.md, B-rate-1…12): fixed windows, the counter keys
 * scene creation and purchases count under, and the decision with its `Retry-After`. No I/O and no
 * clock reads: `rate-limiter.ts` and `poll-ceiling.ts` count and throw.
 */
import { SECOND } from './time'

/** At most `limit` calls per window of `windowSeconds`. */
export interface WindowLimit {
  /** Calls allowed per window (a positive integer). */
  limit: number
  /** The window's length in seconds (a positive integer). */
  windowSeconds: number
}

/** One window: `[start, end)`, epoch milliseconds. */
export interface Window {
  /** First millisecond of the window. */
  start: number
  /** First millisecond after it. */
  end: number
}

/** The length of the daily QR code budget's window: one UTC day (B-rate-6). */
export const BUDGET_WINDOW_SECONDS = 24 * 3600

/**
 * The fixed window of `windowSeconds` that holds `now` (B-rate-2): windows are aligned to the epoch,
 * so every instance computes the same one from the same clock, and a window of 86 400 s is the UTC
 * day (the epoch starts at midnight UTC and its days have no leap seconds).
 */
export function windowOf(now: number, windowSeconds: number): Window {
  const length = windowSeconds * SECOND
  const start = Math.floor(now / length) * length
  return { start, end: start + length }
}

/** Whole seconds until `window` ends, at least 1 (B-rate-8): `Retry-After` never says "now". */
export function secondsUntilEnd(window: Window, now: number): number {
  return Math.max(1, Math.ceil((window.end - now) / SECOND))
}

/** A call is allowed while its count is within the limit: the first `limit` calls of a window pass (B-rate-3). */
export function isWithin(count: number, limit: number): boolean {
  return count <= limit
}

/** What scene creation counts: the device, the client address, the account's daily QR code budget. */
export type SceneLimitKind = 'device' | 'address' | 'budget'

/** What a purchase counts (B-rate-10, B-rate-11): the buyer and the client address. */
export type PurchaseLimitKind = 'purchase_user' | 'purchase_address'

/** One counter to increment for a scene creation (or, with `K`, a purchase), and the limit it is held to. */
export interface CounterCheck<K extends string = SceneLimitKind> {
  /** Which limit. */
  kind: K
  /** The store counter key (opaque to the store, at most 512 characters: subjects are at most 128). */
  key: string
  /** Calls allowed in the window. */
  limit: number
  /** The window counted in; the counter expires at its end. */
  window: Window
}

/** The settings of scene creation's limits; `false` turns one off. */
export interface SceneLimits {
  /** Per `deviceId` (B-rate-4). */
  perDevice: WindowLimit | false
  /** Per client address (B-rate-5). */
  perAddress: WindowLimit | false
  /** QR codes per UTC day for the whole account (B-rate-6). */
  dailyQrBudget: number | false
}

/**
 * The key of one counter: the limit, the window's start and the subject, in that order. The subject
 * comes last, so whatever characters it holds cannot make two keys collide; the window's start
 * makes every window a key of its own, so a clock a little behind on one instance never counts into
 * (or resets) the next window of another.
 */
export function counterKey(kind: SceneLimitKind, window: Window, subject: string): string {
  return `ratelimit:create_scene:${kind}:${window.start}:${subject}`
}

/**
 * The counters to increment before a scene is created, in two stages (B-rate-7): `first` (the device
 * and the address, counted together), then `budget` only when every `first` one allowed the call, so
 * a call refused for its device or address never spends the account's budget. A limit turned off,
 * or an address not given, has no counter.
 */
export function sceneChecks(input: { deviceId: string; clientAddress: string | undefined; now: number; limits: SceneLimits }): {
  first: CounterCheck[]
  budget: CounterCheck | null
} {
  const { deviceId, clientAddress, now, limits } = input
  const first: CounterCheck[] = []
  const per = (kind: SceneLimitKind, setting: WindowLimit, subject: string) => {
    const window = windowOf(now, setting.windowSeconds)
    first.push({ kind, key: counterKey(kind, window, subject), limit: setting.limit, window })
  }
  if (limits.perDevice !== false) per('device', limits.perDevice, deviceId)
  if (limits.perAddress !== false && clientAddress !== undefined) per('address', limits.perAddress, addressSubject(clientAddress))
  let budget: CounterCheck | null = null
  if (limits.dailyQrBudget !== false) {
    const window = windowOf(now, BUDGET_WINDOW_SECONDS)
    budget = { kind: 'budget', key: counterKey('budget', window, ''), limit: limits.dailyQrBudget, window }
  }
  return { first, budget }
}

/** The settings of the purchase limits; `false` turns one off. */
export interface PurchaseLimits {
  /** Purchases per buyer, whether by scene or by session (B-rate-10). */
  purchasesPerUser: WindowLimit | false
  /** Purchases per client address (B-rate-11). */
  purchasesPerAddress: WindowLimit | false
}

/** The key of a purchase counter: the limit, the window's start, then the subject (see {@link counterKey}). */
export function purchaseCounterKey(kind: PurchaseLimitKind, window: Window, subject: string): string {
  return `ratelimit:purchase:${kind === 'purchase_user' ? 'user' : 'address'}:${window.start}:${subject}`
}

/**
 * The counters to increment before a purchase may go on to the payment service (B-rate-10…12): the
 * buyer's and, when the caller gave one, the client address's (an IPv6 address as its /64, as for
 * scene creation, B-rate-5), counted together. A limit turned off has no counter.
 */
export function purchaseChecks(input: { userId: number; clientAddress: string | undefined; now: number; limits: PurchaseLimits }): CounterCheck<PurchaseLimitKind>[] {
  const { userId, clientAddress, now, limits } = input
  const checks: CounterCheck<PurchaseLimitKind>[] = []
  const per = (kind: PurchaseLimitKind, setting: WindowLimit, subject: string) => {
    const window = windowOf(now, setting.windowSeconds)
    checks.push({ kind, key: purchaseCounterKey(kind, window, subject), limit: setting.limit, window })
  }
  if (limits.purchasesPerUser !== false) per('purchase_user', limits.purchasesPerUser, String(userId))
  if (limits.purchasesPerAddress !== false && clientAddress !== undefined) per('purchase_address', limits.purchasesPerAddress, addressSubject(clientAddress))
  return checks
}

/** A refusal: the limits that refused, and how long until all of them let a call through. */
export interface Refusal<K extends string = SceneLimitKind> {
  /** The kinds that refused, in check order. */
  kinds: K[]
  /** The longest wait among them (B-rate-8), whole seconds, at least 1. */
  retryAfterSeconds: number
}

/**
 * Decides from the counts the store answered (`counts[i]` for `checks[i]`): null when every check
 * allows the call, otherwise the refusal (B-rate-3, B-rate-8).
 */
export function decide<K extends string>(checks: readonly CounterCheck<K>[], counts: readonly number[], now: number): Refusal<K> | null {
  const refusing = checks.filter((check, i) => !isWithin(counts[i] as number, check.limit))
  if (refusing.length === 0) return null
  return {
    kinds: refusing.map((check) => check.kind),
    retryAfterSeconds: Math.max(...refusing.map((check) => secondsUntilEnd(check.window, now))),
  }
}

const MAPPED_IPV4 = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/
const HEX_GROUP = /^[0-9a-f]{1,4}$/
const DOTTED_QUAD = /^\d{1,3}(?:\.\d{1,3}){3}$/

/**
 * The subject a client address is counted under (B-rate-5): an IPv4 address as it is (also when
 * written IPv4-mapped, `::ffff:192.0.2.1`, as Node reports it on a dual-stack socket); an IPv6
 * address as its /64 network, because one subscriber commonly holds a whole /64 and could
 * otherwise rotate through 2^64 addresses; anything else (a key an application derived itself) as
 * it is.
 */
export function addressSubject(address: string): string {
  const lower = address.toLowerCase()
  const mapped = MAPPED_IPV4.exec(lower)
  if (mapped) return mapped[1] as string
  const network = ipv6Network64(lower)
  return network ?? address
}

/** The /64 network of an IPv6 address in canonical form (`2001:db8:0:1::/64`), or undefined when it is not one. */
function ipv6Network64(address: string): string | undefined {
  const bare = address.split('%')[0] as string // a zone id (`fe80::1%eth0`) names an interface, not an address
  const halves = bare.split('::')
  if (halves.length > 2) return undefined
  const groupsOf = (part: string) => (part === '' ? [] : part.split(':'))
  const head = groupsOf(halves[0] as string)
  const tail = halves.length === 2 ? groupsOf(halves[1] as string) : []
  // An embedded IPv4 tail (`::1.2.3.4`) holds the last two groups; only the first four matter here.
  const last = halves.length === 2 ? tail : head
  if (last.length > 0 && DOTTED_QUAD.test(last[last.length - 1] as string)) last.splice(-1, 1, '0', '0')
  const count = head.length + tail.length
  if (halves.length === 1 ? count !== 8 : count > 7) return undefined
  const groups = [...head, ...Array<string>(8 - count).fill('0'), ...tail]
  if (!groups.every((group) => HEX_GROUP.test(group))) return undefined
  const prefix = groups.slice(0, 4).map((group) => parseInt(group, 16).toString(16))
  return `${prefix.join(':')}::/64`
}
