/**
 * What the purchase suites share: a selling scanauth instance over the store under test with the
 * options a case needs, and a user whose free trial is over on a scene that answers `need_purchase`.
 */
import { expect } from 'vitest'
import { createScanAuth, type PhonePayOptions, type ScanAuth, type ScanAuthOptions, type Store } from '@scanauth/core'
import type { ContractContext } from '../context'
import { FREE_TRIAL_DAYS, SCENE_TTL_SECONDS, SESSION_TTL_HOURS } from '../context'
import type { TestPaymentService } from '../payment-service'
import { TEST_PLANS } from './orders'

export const MINUTE = 60_000

/** A scanauth instance selling {@link TEST_PLANS} through `service`, over `store` (default the store under test). */
export function sellingAuthWith(
  ctx: ContractContext,
  service: TestPaymentService,
  options: Pick<ScanAuthOptions, 'rateLimits' | 'requirePollSecret' | 'confirm' | 'confirmation'> & { store?: Store; phone?: PhonePayOptions } = {},
): ScanAuth {
  const { store = ctx.store, phone, ...rest } = options
  return createScanAuth({
    store,
    qr: ctx.qr,
    now: ctx.clock.now,
    sceneTtlSeconds: SCENE_TTL_SECONDS,
    sessionTtlHours: SESSION_TTL_HOURS,
    freeTrialDays: FREE_TRIAL_DAYS,
    payments: { provider: service, plans: TEST_PLANS, orderTtlMinutes: 15, ...(phone === undefined ? {} : { phone }) },
    ...rest,
  })
}

/** Ends `openid`'s free trial (a first scan, then the trial's days pass); nothing is scanned after. */
export async function endTrial(ctx: ContractContext, auth: ScanAuth, openid: string): Promise<void> {
  const { sceneStr } = await auth.createScene({ deviceId: 'trial-device' })
  await auth.handleScan({ sceneStr, openid })
  ctx.clock.advance(FREE_TRIAL_DAYS * 24 * 60 * MINUTE)
}

/** A new scene scanned by `openid`, who must have no access: it answers need_purchase. With its poll secret, when it has one. */
export async function needPurchaseSceneOf(auth: ScanAuth, openid: string, deviceId = 'tv'): Promise<{ sceneStr: string; pollSecret: string | undefined }> {
  const { sceneStr, pollSecret } = await auth.createScene({ deviceId })
  expect(await auth.handleScan({ sceneStr, openid })).toMatchObject({ result: 'need_purchase' })
  return { sceneStr, pollSecret }
}

/** The whole seconds from `now` to the end of its window of `windowSeconds` (B-rate-2, B-rate-8). */
export function secondsToWindowEnd(now: number, windowSeconds: number): number {
  const length = windowSeconds * 1000
  return Math.max(1, Math.ceil((Math.floor(now / length) * length + length - now) / 1000))
}
