/**
 * Reminders before access ends (docs/behaviour.md, B-remind-1…10) on the store under test, through
 * `createScanAuth` with `reminders`: who is due (the end of everything a person holds, the smallest
 * lead, points running low), one message per person, authorization and lead across passes and
 * instances, the claim kept through a crash and given back on a failure that may pass, a quota that
 * stops the pass, and the "remind me" subscription's consent, stored once and spent by one send.
 */
import { describe, expect, it } from 'vitest'
import { createScanAuth, type ScanAuth, type Store } from '@scanauth/core'
import type { ContractContext } from '../context'
import { FREE_TRIAL_DAYS, SCENE_TTL_SECONDS, SESSION_TTL_HOURS, DAY, HOUR } from '../context'
import { TestNotifier } from '../notifier'
import { TestPaymentService } from '../payment-service'
import { TestWebOAuth } from '../web-oauth'
import { TEST_PLANS } from './orders'
import { expectScanAuthError } from '../steps'

const PAGES_URL = 'https://app.example.test/auth/m/'
const SUBSCRIPTION = { templateId: 'tpl-once', scene: 7 }

/** An instance over `store` reminding at 3 and 1 days (and below 10 points) through `notifier`. */
function remindingAuth(ctx: ContractContext, notifier: TestNotifier, store: Store = ctx.store): ScanAuth {
  return createScanAuth({
    store,
    qr: ctx.qr,
    now: ctx.clock.now,
    sceneTtlSeconds: SCENE_TTL_SECONDS,
    sessionTtlHours: SESSION_TTL_HOURS,
    freeTrialDays: FREE_TRIAL_DAYS,
    reminders: { leadDays: [3, 1], pointsBelow: 10, notifier, url: PAGES_URL },
  })
}

/** A first scan of `openid`: its 7-day trial starts now. */
async function signIn(auth: ScanAuth, openid: string): Promise<void> {
  const { sceneStr } = await auth.createScene({ deviceId: `tv-${openid}` })
  expect(await auth.handleScan({ sceneStr, openid })).toMatchObject({ result: 'authorized' })
}

export function reminderSuite(get: () => ContractContext): void {
  describe('reminders before access ends (B-remind-1…10)', () => {
    it('B-remind-2, B-remind-3: due within a lead of the end of everything held; the smallest lead only; nobody else', async () => {
      const ctx = get()
      const notifier = new TestNotifier()
      const auth = remindingAuth(ctx, notifier)
      await signIn(auth, 'alice') // trial ends in 7 days
      await signIn(auth, 'bob')
      await auth.grant({ openid: 'bob', type: 'time', durationSeconds: 30 * 24 * 3600 }) // queued: bob's access goes on
      // Five days in: alice's trial ends in 2 days (lead 3); bob's chain in 32.
      ctx.clock.advance(5 * DAY)
      const first = await auth.sendReminders()
      expect(first).toMatchObject({ due: 1, sent: 1, failed: 0, stopped: false, byChannel: { template: 1 } })
      expect(first.skipped.renewed).toBeGreaterThanOrEqual(0)
      expect(notifier.messages).toEqual([
        expect.objectContaining({ openid: 'alice', kind: 'time', leadDays: 3, endsAt: new Date(ctx.clock.now() + 2 * DAY).toISOString(), renewUrl: null, subscribed: false }),
      ])
      // The same pass again, and later within the same lead: nothing more.
      ctx.clock.advance(HOUR)
      expect(await auth.sendReminders()).toMatchObject({ due: 0, sent: 0, skipped: { already_reminded: 1 } })
      // Within a day of the end: the 1-day lead, once.
      ctx.clock.advance(DAY + 12 * HOUR)
      expect(await auth.sendReminders()).toMatchObject({ due: 1, sent: 1 })
      expect(notifier.messages.map((m) => [m.openid, m.leadDays])).toEqual([
        ['alice', 3],
        ['alice', 1],
      ])
      // After the end: nothing, ever.
      ctx.clock.advance(DAY)
      expect(await auth.sendReminders()).toMatchObject({ due: 0, sent: 0 })
    })

    it('B-remind-3: a pass that starts late sends only the most urgent lead; a renewal before the end stops the reminders', async () => {
      const ctx = get()
      const notifier = new TestNotifier()
      const auth = remindingAuth(ctx, notifier)
      await signIn(auth, 'carol')
      await signIn(auth, 'dave')
      ctx.clock.advance(6 * DAY + 12 * HOUR) // half a day left: the 1-day lead only
      await auth.grant({ openid: 'dave', type: 'time', durationSeconds: 10 * 24 * 3600 }) // dave renewed
      expect(await auth.sendReminders()).toMatchObject({ due: 1, sent: 1 })
      expect(notifier.messages.map((m) => [m.openid, m.leadDays])).toEqual([['carol', 1]])
    })

    it('B-remind-5: a points authorization below pointsBelow is reminded once; a dry run sends and records nothing', async () => {
      const ctx = get()
      const notifier = new TestNotifier()
      const auth = remindingAuth(ctx, notifier)
      await signIn(auth, 'erin')
      ctx.clock.advance(FREE_TRIAL_DAYS * DAY) // the trial (and its session) is over
      await auth.grant({ openid: 'erin', type: 'points', points: 12 })
      await signIn(auth, 'erin') // a new session; the points are active
      const sessions = (await ctx.dump()).sessions.filter((s) => s.userId === 1).sort((a, b) => b.expiresAt - a.expiresAt)
      const session = sessions[0]?.token as string
      await auth.consume({ sessionToken: session, points: 1 }) // 11 left
      expect(await auth.sendReminders()).toMatchObject({ due: 0 })
      await auth.consume({ sessionToken: session, points: 2 }) // 9 left
      const dry = await auth.sendReminders({ dryRun: true })
      expect(dry).toMatchObject({ due: 1, sent: 0, planned: [{ userId: 1, kind: 'points', leadDays: null }] })
      expect(notifier.messages).toEqual([])
      expect(await auth.sendReminders()).toMatchObject({ due: 1, sent: 1 })
      expect(notifier.messages).toEqual([expect.objectContaining({ openid: 'erin', kind: 'points', remainingPoints: 9, endsAt: null })])
      await auth.consume({ sessionToken: session, points: 1 })
      expect(await auth.sendReminders()).toMatchObject({ due: 0, skipped: { already_reminded: 1 } })
    })

    it('B-remind-4: two instances on two connections run the same pass at once: each person is told once', async () => {
      const ctx = get()
      const notifier = new TestNotifier()
      const [one, two] = (await ctx.stores(2)).map((store) => remindingAuth(ctx, notifier, store)) as [ScanAuth, ScanAuth]
      for (let i = 0; i < 12; i++) await signIn(one, `user-${i}`)
      ctx.clock.advance(5 * DAY)
      const [a, b] = await Promise.all([one.sendReminders(), two.sendReminders()])
      expect(a.sent + b.sent).toBe(12)
      expect(a.skipped.already_reminded + b.skipped.already_reminded).toBe(12)
      expect(new Set(notifier.messages.map((m) => m.openid)).size).toBe(12)
      expect(notifier.messages).toHaveLength(12)
    })

    it('B-remind-5: a failure that may pass gives the claim back; a quota stops the pass; a notifier that throws sends nothing twice', async () => {
      const ctx = get()
      const notifier = new TestNotifier()
      const auth = remindingAuth(ctx, notifier)
      for (const openid of ['f1', 'f2', 'f3']) await signIn(auth, openid)
      ctx.clock.advance(5 * DAY)
      notifier.answer = () => ({ outcome: 'stop', reason: '45009 daily quota' })
      expect(await auth.sendReminders()).toMatchObject({ due: 1, sent: 0, failed: 1, stopped: true })
      notifier.answer = (m) => {
        if (m.openid === 'f2') throw new Error('connect ECONNRESET')
        return m.openid === 'f3' ? { outcome: 'unreachable', reason: 'no channel', unreachable: ['template', 'custom'] } : { outcome: 'sent', channel: 'template' }
      }
      expect(await auth.sendReminders()).toMatchObject({ due: 3, sent: 1, failed: 1, skipped: { unreachable: 1 } })
      notifier.answer = () => ({ outcome: 'sent', channel: 'template' })
      // Only f2's claim was given back.
      expect(await auth.sendReminders()).toMatchObject({ due: 1, sent: 1, skipped: { already_reminded: 2 } })
      expect(notifier.messages.filter((m) => m.openid === 'f2')).toHaveLength(2)
      expect(notifier.messages.filter((m) => m.openid === 'f1')).toHaveLength(2) // the stopped pass, then sent
    })

    it('B-remind-4: a pass cut off between the claim and the send never sends that reminder again', async () => {
      const ctx = get()
      const notifier = new TestNotifier()
      const auth = remindingAuth(ctx, notifier)
      await signIn(auth, 'gina')
      ctx.clock.advance(5 * DAY)
      // The claim a pass killed before its send leaves behind (reminder:<user>:<authorization>:<lead>).
      const trial = (await ctx.dump()).authorizations.find((a) => a.userId === 1) as { id: number; endAt: number }
      await ctx.store.incrementCounter(`reminder:1:${trial.id}:3`, trial.endAt + 30 * DAY, ctx.clock.now())
      expect(await auth.sendReminders()).toMatchObject({ due: 0, skipped: { already_reminded: 1 } })
      expect(notifier.messages).toEqual([])
    })

    it('B-remind-6…8: the "remind me" link, the redirect that stores one consent, spent by one send; forgeries store nothing', async () => {
      const ctx = get()
      const notifier = new TestNotifier(SUBSCRIPTION)
      const auth = remindingAuth(ctx, notifier)
      expect(auth.reminderSubscription).toBe(true)
      // A scan that signs in offers the link in its reply.
      const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
      const scan = await auth.handleScan({ sceneStr, openid: 'hana' })
      const link = new URL((scan as { remindUrl: string }).remindUrl)
      expect(link.origin + link.pathname).toBe('https://mp.weixin.qq.com/mp/subscribemsg')
      expect(link.searchParams.get('redirect_url')).toBe(`${PAGES_URL}subscribed`)
      const reserved = link.searchParams.get('reserved') as string
      expect(reserved).toMatch(/^[0-9a-f]{32}$/)
      const back = { templateId: 'tpl-once', scene: '7', reserved }
      // Forged or foreign redirects store nothing.
      await expectScanAuthError(auth.acceptSubscription({ ...back, openid: 'hana', templateId: 'other' }), 'subscription_invalid', 400)
      await expectScanAuthError(auth.acceptSubscription({ ...back, openid: 'mallory', action: 'confirm' }), 'subscription_state_invalid', 403)
      await expectScanAuthError(auth.acceptSubscription({ ...back, openid: 'hana', action: 'confirm', reserved: '0'.repeat(32) }), 'subscription_state_invalid', 403)
      expect(await auth.acceptSubscription({ ...back, action: 'cancel' })).toBe('cancelled')
      // The person's confirmation: one consent; a replay stores nothing more.
      expect(await auth.acceptSubscription({ ...back, openid: 'hana', action: 'confirm' })).toBe('subscribed')
      await expectScanAuthError(auth.acceptSubscription({ ...back, openid: 'hana', action: 'confirm' }), 'subscription_state_invalid', 403)
      ctx.clock.advance(5 * DAY)
      expect(await auth.sendReminders()).toMatchObject({ sent: 1, byChannel: { subscribe: 1 } })
      expect(notifier.messages[0]).toMatchObject({ openid: 'hana', subscribed: true })
      // Spent: the next lead's message finds no consent.
      ctx.clock.advance(DAY + 12 * HOUR)
      expect(await auth.sendReminders()).toMatchObject({ sent: 1, byChannel: { template: 1 } })
      expect(notifier.messages[1]).toMatchObject({ openid: 'hana', subscribed: false })
    })

    it('B-remind-9: with payments.phone the message carries the renewal link, the phone pages\' plans page', async () => {
      const ctx = get()
      const notifier = new TestNotifier()
      const auth = createScanAuth({
        store: ctx.store,
        qr: ctx.qr,
        now: ctx.clock.now,
        payments: { provider: new TestPaymentService(ctx.clock.now), plans: TEST_PLANS, phone: { url: PAGES_URL, oauth: new TestWebOAuth() } },
        reminders: { leadDays: [3], notifier },
      })
      await signIn(auth, 'kate')
      ctx.clock.advance(5 * DAY)
      expect(await auth.sendReminders()).toMatchObject({ sent: 1 })
      expect(notifier.messages[0]).toMatchObject({ openid: 'kate', renewUrl: `${PAGES_URL}pay` })
      // A job that sells nothing itself (a cron process) says the server sells on the phone: `renewal`.
      const job = createScanAuth({ store: ctx.store, qr: ctx.qr, now: ctx.clock.now, reminders: { leadDays: [3, 1], notifier, url: PAGES_URL, renewal: true } })
      ctx.clock.advance(DAY + 12 * HOUR)
      expect(await job.sendReminders()).toMatchObject({ sent: 1 })
      expect(notifier.messages[1]).toMatchObject({ openid: 'kate', leadDays: 1, renewUrl: `${PAGES_URL}pay` })
    })

    it('B-remind-1: without reminders nothing is offered and a pass is refused; a channel found unreachable is told next time', async () => {
      const ctx = get()
      await expectScanAuthError(ctx.auth.sendReminders(), 'reminders_not_configured', 404)
      expect(await ctx.auth.remindMeUrl('alice')).toBeNull()
      const notifier = new TestNotifier()
      const auth = remindingAuth(ctx, notifier)
      await signIn(auth, 'ivan')
      await signIn(auth, 'judy')
      ctx.clock.advance(5 * DAY)
      notifier.answer = (m) => ({ outcome: 'sent', channel: 'custom', unreachable: m.openid === 'ivan' ? ['template'] : [] })
      await auth.sendReminders()
      ctx.clock.advance(DAY + 12 * HOUR)
      await auth.sendReminders()
      const second = notifier.messages.slice(2)
      expect(second.find((m) => m.openid === 'ivan')?.unreachableChannels).toEqual(['template'])
      expect(second.find((m) => m.openid === 'judy')?.unreachableChannels).toEqual([])
    })
  })
}
