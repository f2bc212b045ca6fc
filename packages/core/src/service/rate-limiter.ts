/**
 * The shell around scene creation's limits (docs/behaviour.md, B-rate-1…8) and the purchase limits
 * (B-rate-10…12): it increments the counters `rules/rate-limits.ts` names, in the store, and throws
 * `rate_limited` when the rules refuse. The counters live in the store so that every instance over
 * it shares them, and `incrementCounter` is atomic, so concurrent calls never both take the last
 * place in a window.
 *
 * @module
 */
import { ScanAuthError } from '../errors'
import {
  decide,
  purchaseChecks,
  sceneChecks,
  type CounterCheck,
  type PurchaseLimitKind,
  type PurchaseLimits,
  type Refusal,
  type SceneLimitKind,
  type SceneLimits,
} from '../rules/rate-limits'
import type { Store } from '../store/contract'

/** The limit that refused a call: a scene-creation limit, a scene's poll ceiling, or a purchase limit. */
export type RefusedLimit = SceneLimitKind | 'poll' | PurchaseLimitKind

/** Which limit threw each `rate_limited` error, for telemetry; the error itself keeps its shape. */
const refusedBy = new WeakMap<ScanAuthError, RefusedLimit>()

/** A `rate_limited` error, remembered as refused by `limit`. */
export function rateLimited(limit: RefusedLimit, message: string, retryAfterSeconds: number): ScanAuthError {
  const error = new ScanAuthError('rate_limited', message, { retryAfterSeconds })
  refusedBy.set(error, limit)
  return error
}

/** The limit behind a `rate_limited` error made by {@link rateLimited}, or undefined. */
export function refusedLimitOf(error: unknown): RefusedLimit | undefined {
  return error instanceof ScanAuthError ? refusedBy.get(error) : undefined
}

/** Admits or refuses a scene creation; see {@link createSceneLimiter}. */
export type SceneLimiter = (input: { deviceId: string; clientAddress: string | undefined }) => Promise<void>

/** What each limit says when it refuses (the `detail` of the 429). */
const REASONS: Record<SceneLimitKind | PurchaseLimitKind, string> = {
  device: 'Too many QR codes requested for this device',
  address: 'Too many QR codes requested from this address',
  budget: "The account's daily QR code budget is used up",
  purchase_user: 'Too many purchases for this user',
  purchase_address: 'Too many purchases from this address',
}

/** Increments each check's counter in the store (all at once); the counts in the checks' order. */
function count<K extends string>(store: Store, checks: readonly CounterCheck<K>[], at: number): Promise<number[]> {
  return Promise.all(checks.map((check) => store.incrementCounter(check.key, check.window.end, at)))
}

/**
 * Creates the limiter of `createScene`. It resolves when the call may go on to the QR provider and
 * throws `ScanAuthError` `rate_limited` (429, with `retryAfterSeconds`) when a limit refuses it.
 * Store errors pass through: the call fails rather than going on unlimited.
 */
export function createSceneLimiter(store: Store, limits: SceneLimits, now: () => number): SceneLimiter {
  return async ({ deviceId, clientAddress }) => {
    const at = now()
    const { first, budget } = sceneChecks({ deviceId, clientAddress, now: at, limits })
    // The device and the address together (one round trip's wait); the budget only for a call they
    // both let through, so one address refused again and again cannot spend it (B-rate-7).
    refuseIf(decide(first, await count(store, first, at), at))
    if (budget !== null) refuseIf(decide([budget], await count(store, [budget], at), at))
  }
}

/** Admits or refuses a purchase whose buyer is known; see {@link createPurchaseLimiter}. */
export type PurchaseLimiter = (input: { userId: number; clientAddress: string | undefined }) => Promise<void>

/**
 * Creates the limiter of `purchase` (B-rate-10…12). It resolves when the purchase may go on to the
 * per-user lock and the payment service, and throws `rate_limited` (429, with `retryAfterSeconds`)
 * when the buyer's or the address's limit refuses it. Store errors pass through.
 */
export function createPurchaseLimiter(store: Store, limits: PurchaseLimits, now: () => number): PurchaseLimiter {
  return async ({ userId, clientAddress }) => {
    const at = now()
    const checks = purchaseChecks({ userId, clientAddress, now: at, limits })
    if (checks.length > 0) refuseIf(decide(checks, await count(store, checks, at), at))
  }
}

function refuseIf<K extends SceneLimitKind | PurchaseLimitKind>(refusal: Refusal<K> | null): void {
  if (refusal === null) return
  const { kinds, retryAfterSeconds } = refusal
  // Several limits may refuse one call; the error, and telemetry, name the first.
  const kind = kinds[0] as K
  throw rateLimited(kind, `${REASONS[kind]}; try again in ${retryAfterSeconds} s`, retryAfterSeconds)
}
