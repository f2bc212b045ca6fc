/**
 * Confirm on the phone (docs/behaviour.md, B-confirm-1…12) and the poll secret (B-secret-1…4) on
 * the store under test, through `createScanAuth`: the `scanned` and `denied` states, the one-time
 * ticket found by its digest (also across two instances on two connections), the CSRF token of the
 * page last shown, and the session token withheld from a poll without the secret.
 */
import { describe, expect, it } from 'vitest'
import { createScanAuth, type ScanAuth, type ScanResult, type Store } from '@scanauth/core'
import type { ContractContext } from '../context'
import { FREE_TRIAL_DAYS, SCENE_TTL_SECONDS, SESSION_TTL_HOURS, SECOND, DAY } from '../context'
import { checkInvariants } from '../invariants'
import { expectScanAuthError, sceneIn } from '../steps'
import { TEST_AUTHORIZE_BASE, TestWebOAuth } from '../web-oauth'

const CONFIRM_URL = 'https://app.example.test/auth/confirm'
const TICKET_TTL_SECONDS = 120

/** A scanauth instance in `confirm: 'link'` mode over `store`. */
function confirmingAuth(ctx: ContractContext, store: Store, oauth: TestWebOAuth, extra: { requirePollSecret?: boolean } = {}): ScanAuth {
  return createScanAuth({
    store,
    qr: ctx.qr,
    now: ctx.clock.now,
    sceneTtlSeconds: SCENE_TTL_SECONDS,
    sessionTtlHours: SESSION_TTL_HOURS,
    freeTrialDays: FREE_TRIAL_DAYS,
    confirm: 'link',
    confirmation: { url: CONFIRM_URL, oauth },
    ...extra,
  })
}

/** A scene scanned by `openid` in confirm mode, with its ticket. */
async function scannedScene(auth: ScanAuth, openid = 'alice', deviceId = 'tv-livingroom') {
  const { sceneStr } = await auth.createScene({ deviceId, clientAddress: '203.0.113.77' })
  const scan = await auth.handleScan({ sceneStr, openid })
  expect(scan.result).toBe('scanned')
  return { sceneStr, ticket: (scan as ScanResult & { result: 'scanned' }).ticket, scan: scan as ScanResult & { result: 'scanned' } }
}

/** The page opened by `openid` after WeChat OAuth: its CSRF token. */
async function openedBy(auth: ScanAuth, oauth: TestWebOAuth, ticket: string, openid = 'alice'): Promise<string> {
  const first = await auth.openConfirmation({ ticket })
  if (first.step !== 'authorize') throw new Error('expected the OAuth redirect first')
  const state = new URL(first.location).searchParams.get('state') as string
  const step = await auth.openConfirmation({ ticket, code: oauth.issueCode(openid), state })
  if (step.step !== 'decide') throw new Error('expected the decision page')
  return step.csrf
}

export function confirmSuite(get: () => ContractContext): void {
  describe('confirm on the phone (B-confirm-1…12)', () => {
    it('B-confirm-1: a first scan moves the scene to scanned and remembers the scanner; no user, trial or session yet', async () => {
      const ctx = get()
      const auth = confirmingAuth(ctx, ctx.store, new TestWebOAuth())
      const { sceneStr, ticket, scan } = await scannedScene(auth)
      expect(scan).toEqual({
        result: 'scanned',
        deviceId: 'tv-livingroom',
        ticket,
        confirmUrl: `${CONFIRM_URL}?ticket=${ticket}`,
        expiresAt: ctx.clock.now() + TICKET_TTL_SECONDS * SECOND,
      })
      expect(ticket).toMatch(/^[A-Za-z0-9_-]{43}$/)
      const snapshot = await ctx.dump()
      expect(sceneIn(snapshot, sceneStr)).toMatchObject({ status: 'scanned', userId: null, authorizedAt: null, requestedFrom: '203.0.113.*' })
      const confirmation = sceneIn(snapshot, sceneStr).confirmation
      expect(confirmation).toMatchObject({ scannedBy: 'alice', scannedAt: ctx.clock.now(), csrfHash: null })
      // Only the digest of the ticket is stored (B-confirm-2).
      expect(JSON.stringify(snapshot)).not.toContain(ticket)
      expect(snapshot.users).toEqual([])
      expect(snapshot.sessions).toEqual([])
      expect(await auth.getStatus(sceneStr)).toEqual({ status: 'scanned' })
    })

    it('B-confirm-1: the default mode is the specification: a scan authorizes at once and no scene is ever scanned', async () => {
      const ctx = get()
      const { sceneStr } = await ctx.auth.createScene({ deviceId: 'tv', clientAddress: '203.0.113.77' })
      expect((await ctx.auth.handleScan({ sceneStr, openid: 'alice' })).result).toBe('authorized')
      expect(sceneIn(await ctx.dump(), sceneStr)).toMatchObject({ status: 'authorized', requestedFrom: null, confirmation: null, pollSecretHash: null })
    })

    it('B-confirm-3: a scan of a scanned scene by anyone else, or of a denied one, changes nothing', async () => {
      const ctx = get()
      const oauth = new TestWebOAuth()
      const auth = confirmingAuth(ctx, ctx.store, oauth)
      const { sceneStr, ticket } = await scannedScene(auth)
      const before = await ctx.dump()
      expect(await auth.handleScan({ sceneStr, openid: 'mallory' })).toEqual({ result: 'invalid' })
      expect(await ctx.dump()).toEqual(before)
      await auth.decideConfirmation({ ticket, csrf: await openedBy(auth, oauth, ticket), decision: 'deny' })
      const denied = await ctx.dump()
      expect(await auth.handleScan({ sceneStr, openid: 'alice' })).toEqual({ result: 'invalid' })
      expect(await ctx.dump()).toEqual(denied)
    })

    it('B-confirm-3: the scanner scanning again gets a new ticket (a lost reply); the old link names nothing, the deadline stays', async () => {
      const ctx = get()
      const oauth = new TestWebOAuth()
      const auth = confirmingAuth(ctx, ctx.store, oauth)
      const { sceneStr, ticket: first, scan } = await scannedScene(auth)
      const oldCsrf = await openedBy(auth, oauth, first)
      ctx.clock.advance(30 * SECOND)
      const again = await auth.handleScan({ sceneStr, openid: 'alice' })
      expect(again).toMatchObject({ result: 'scanned', deviceId: 'tv-livingroom', expiresAt: scan.expiresAt })
      const second = (again as { ticket: string }).ticket
      expect(second).not.toBe(first)
      await expectScanAuthError(auth.openConfirmation({ ticket: first }), 'confirm_ticket_invalid', 404)
      await expectScanAuthError(auth.decideConfirmation({ ticket: first, csrf: oldCsrf, decision: 'confirm' }), 'confirm_ticket_invalid', 404)
      expect(sceneIn(await ctx.dump(), sceneStr)).toMatchObject({ status: 'scanned', confirmation: { scannedBy: 'alice', csrfHash: null } })
      expect((await auth.decideConfirmation({ ticket: second, csrf: await openedBy(auth, oauth, second), decision: 'confirm' })).result).toBe('authorized')
    })

    it('B-confirm-6: the link goes through WeChat OAuth with a state tied to the ticket; the page shows the device, where and when', async () => {
      const ctx = get()
      const oauth = new TestWebOAuth()
      const auth = confirmingAuth(ctx, ctx.store, oauth)
      const { sceneStr, ticket } = await scannedScene(auth, 'alice', 'evil\u202Etxt.exe\u200B')
      const first = await auth.openConfirmation({ ticket })
      expect(first.step).toBe('authorize')
      const location = new URL((first as { location: string }).location)
      expect(`${location.origin}${location.pathname}`).toBe(TEST_AUTHORIZE_BASE)
      expect(location.searchParams.get('redirect_uri')).toBe(`${CONFIRM_URL}?ticket=${ticket}`)
      expect(location.searchParams.get('scope')).toBe('snsapi_base')
      const state = location.searchParams.get('state') as string
      expect(state).toMatch(/^[A-Za-z0-9]{1,128}$/)
      expect(state).not.toContain(ticket)
      ctx.clock.advance(65 * SECOND)
      const step = await auth.openConfirmation({ ticket, code: oauth.issueCode('alice'), state })
      expect(step).toMatchObject({
        step: 'decide',
        ticket,
        view: { deviceLabel: 'evil\uFFFDtxt.exe\uFFFD', requestedFrom: '203.0.113.*', ageSeconds: 65 },
      })
      expect(sceneIn(await ctx.dump(), sceneStr).confirmation?.csrfHash).toMatch(/^[A-Za-z0-9_-]{43}$/)
    })

    it('B-confirm-12: bad input is refused with its own error and changes nothing', async () => {
      const ctx = get()
      const oauth = new TestWebOAuth()
      const auth = confirmingAuth(ctx, ctx.store, oauth)
      const { ticket } = await scannedScene(auth)
      const first = await auth.openConfirmation({ ticket })
      const state = new URL((first as { location: string }).location).searchParams.get('state') as string
      const before = await ctx.dump()
      await expectScanAuthError(auth.openConfirmation({ ticket: 'A'.repeat(43) }), 'confirm_ticket_invalid', 404)
      await expectScanAuthError(auth.openConfirmation({ ticket: 'short' }), 'confirm_ticket_invalid', 404)
      await expectScanAuthError(auth.openConfirmation({ ticket: '' }), 'invalid_request', 400)
      await expectScanAuthError(auth.openConfirmation({ ticket, code: oauth.issueCode('alice'), state: 'x' + state.slice(1) }), 'invalid_request', 400)
      await expectScanAuthError(auth.openConfirmation({ ticket, code: 'never-issued', state }), 'confirm_oauth_refused', 400)
      // A forwarded link: someone else opened it.
      await expectScanAuthError(auth.openConfirmation({ ticket, code: oauth.issueCode('mallory'), state }), 'confirm_wrong_user', 403)
      oauth.failWith = new Error('connect ECONNREFUSED')
      await expectScanAuthError(auth.openConfirmation({ ticket, code: oauth.issueCode('alice'), state }), 'confirm_oauth_failed', 502)
      oauth.failWith = null
      // Before the page was shown there is no CSRF token to match.
      await expectScanAuthError(auth.decideConfirmation({ ticket, csrf: '', decision: 'confirm' }), 'confirm_csrf_invalid', 403)
      await expectScanAuthError(auth.decideConfirmation({ ticket, csrf: 'B'.repeat(43), decision: 'confirm' }), 'confirm_csrf_invalid', 403)
      await expectScanAuthError(auth.decideConfirmation({ ticket, csrf: 'B'.repeat(43), decision: 'maybe' as 'confirm' }), 'invalid_request', 400)
      expect(await ctx.dump()).toEqual(before)
      const unconfigured = createScanAuth({ store: ctx.store, qr: ctx.qr, now: ctx.clock.now, confirm: 'link' })
      await expectScanAuthError(unconfigured.openConfirmation({ ticket }), 'confirm_not_configured', 404)
    })

    it('B-confirm-7: Confirm runs the whole scan transaction for the scanner and uses the ticket', async () => {
      const ctx = get()
      const oauth = new TestWebOAuth()
      const auth = confirmingAuth(ctx, ctx.store, oauth)
      const { sceneStr, ticket } = await scannedScene(auth)
      const csrf = await openedBy(auth, oauth, ticket)
      const decided = await auth.decideConfirmation({ ticket, csrf, decision: 'confirm' })
      expect(decided).toMatchObject({ result: 'authorized', deviceLabel: 'tv-livingroom' })
      const status = await auth.getStatus(sceneStr)
      expect(status).toMatchObject({ status: 'authorized', authorization: { type: 'time', endAt: new Date(ctx.clock.now() + FREE_TRIAL_DAYS * DAY).toISOString() } })
      const snapshot = await ctx.dump()
      expect(snapshot.users).toMatchObject([{ openid: 'alice', hasClaimedFree: true }])
      expect(snapshot.sessions).toHaveLength(1)
      expect(sceneIn(snapshot, sceneStr)).toMatchObject({ status: 'authorized', userId: decided.userId })
      expect(checkInvariants(snapshot)).toEqual([])
      // Used: neither the page nor the form takes it again.
      await expectScanAuthError(auth.openConfirmation({ ticket }), 'confirm_ticket_used', 410)
      await expectScanAuthError(auth.decideConfirmation({ ticket, csrf, decision: 'deny' }), 'confirm_ticket_used', 410)
      expect(await ctx.dump()).toEqual(snapshot)
    })

    it('B-confirm-7: Confirm by a user without time left answers need_purchase, like a scan', async () => {
      const ctx = get()
      const oauth = new TestWebOAuth()
      const auth = confirmingAuth(ctx, ctx.store, oauth)
      const trial = await scannedScene(auth)
      await auth.decideConfirmation({ ticket: trial.ticket, csrf: await openedBy(auth, oauth, trial.ticket), decision: 'confirm' })
      ctx.clock.advance(FREE_TRIAL_DAYS * DAY)
      const { sceneStr, ticket } = await scannedScene(auth)
      expect(await auth.decideConfirmation({ ticket, csrf: await openedBy(auth, oauth, ticket), decision: 'confirm' })).toMatchObject({ result: 'need_purchase' })
      expect(await auth.getStatus(sceneStr)).toEqual({ status: 'need_purchase' })
    })

    it('B-confirm-8: Deny makes the scene denied, final for every poll, and grants nothing', async () => {
      const ctx = get()
      const oauth = new TestWebOAuth()
      const auth = confirmingAuth(ctx, ctx.store, oauth)
      const { sceneStr, ticket } = await scannedScene(auth)
      expect(await auth.decideConfirmation({ ticket, csrf: await openedBy(auth, oauth, ticket), decision: 'deny' })).toEqual({ result: 'denied', deviceLabel: 'tv-livingroom' })
      expect(await auth.getStatus(sceneStr)).toEqual({ status: 'denied' })
      expect(await auth.waitForStatus(sceneStr, { timeoutMs: 5000 })).toEqual({ status: 'denied' })
      ctx.clock.advance(SCENE_TTL_SECONDS * SECOND)
      expect(await auth.getStatus(sceneStr)).toEqual({ status: 'denied' })
      const snapshot = await ctx.dump()
      expect(snapshot.users).toEqual([])
      expect(snapshot.sessions).toEqual([])
      expect(snapshot.authorizations).toEqual([])
    })

    it('B-confirm-7: only the page shown last counts: reopening the link replaces the CSRF token', async () => {
      const ctx = get()
      const oauth = new TestWebOAuth()
      const auth = confirmingAuth(ctx, ctx.store, oauth)
      const { ticket } = await scannedScene(auth)
      const older = await openedBy(auth, oauth, ticket)
      const newer = await openedBy(auth, oauth, ticket)
      await expectScanAuthError(auth.decideConfirmation({ ticket, csrf: older, decision: 'confirm' }), 'confirm_csrf_invalid', 403)
      expect((await auth.decideConfirmation({ ticket, csrf: newer, decision: 'confirm' })).result).toBe('authorized')
    })

    it('B-confirm-2: the ticket lives two minutes; then the page refuses it and the scene is expired', async () => {
      const ctx = get()
      const oauth = new TestWebOAuth()
      const auth = confirmingAuth(ctx, ctx.store, oauth)
      const { sceneStr, ticket } = await scannedScene(auth)
      const csrf = await openedBy(auth, oauth, ticket)
      ctx.clock.advance(TICKET_TTL_SECONDS * SECOND - 1)
      expect(await auth.getStatus(sceneStr)).toEqual({ status: 'scanned' })
      ctx.clock.advance(1)
      await expectScanAuthError(auth.decideConfirmation({ ticket, csrf, decision: 'confirm' }), 'confirm_ticket_expired', 410)
      await expectScanAuthError(auth.openConfirmation({ ticket }), 'confirm_ticket_expired', 410)
      expect(await auth.getStatus(sceneStr)).toEqual({ status: 'expired' })
      expect((await ctx.dump()).users).toEqual([])
    })

    it('B-confirm-4: a ticket used on one instance is refused on another (two connections)', async () => {
      const ctx = get()
      const oauth = new TestWebOAuth()
      const peer = ctx.harness.openPeer ? await ctx.harness.openPeer() : ctx.store
      const one = confirmingAuth(ctx, ctx.store, oauth)
      const two = confirmingAuth(ctx, peer, oauth)
      const { ticket } = await scannedScene(one)
      // The page is opened on one instance and answered on the other: the ticket is shared state.
      const csrf = await openedBy(two, oauth, ticket)
      expect((await one.decideConfirmation({ ticket, csrf, decision: 'confirm' })).result).toBe('authorized')
      await expectScanAuthError(two.decideConfirmation({ ticket, csrf, decision: 'confirm' }), 'confirm_ticket_used', 410)
      await expectScanAuthError(two.openConfirmation({ ticket }), 'confirm_ticket_used', 410)
    })

    it('B-confirm-4: two decisions at once on two instances: exactly one is taken', async () => {
      const ctx = get()
      const oauth = new TestWebOAuth()
      const peer = ctx.harness.openPeer ? await ctx.harness.openPeer() : ctx.store
      const instances = [confirmingAuth(ctx, ctx.store, oauth), confirmingAuth(ctx, peer, oauth)]
      for (let round = 0; round < 5; round++) {
        const { sceneStr, ticket } = await scannedScene(instances[0] as ScanAuth, `user-${round}`)
        const csrf = await openedBy(instances[1] as ScanAuth, oauth, ticket, `user-${round}`)
        const outcomes = await Promise.allSettled([
          (instances[0] as ScanAuth).decideConfirmation({ ticket, csrf, decision: 'confirm' }),
          (instances[1] as ScanAuth).decideConfirmation({ ticket, csrf, decision: 'deny' }),
        ])
        const taken = outcomes.filter((o) => o.status === 'fulfilled')
        expect(taken).toHaveLength(1)
        const refused = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult
        expect(refused.reason).toMatchObject({ code: 'confirm_ticket_used' })
        const status = (await (instances[0] as ScanAuth).getStatus(sceneStr)).status
        expect(status).toBe((taken[0] as PromiseFulfilledResult<{ result: string }>).value.result)
        const snapshot = await ctx.dump()
        expect(snapshot.sessions.filter((s) => s.sceneId === sceneIn(snapshot, sceneStr).id)).toHaveLength(status === 'denied' ? 0 : 1)
      }
    })

    it('B-confirm-10: a wait is told scanned once, then waits for the decision', async () => {
      const ctx = get()
      const oauth = new TestWebOAuth()
      const auth = confirmingAuth(ctx, ctx.store, oauth)
      const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
      const waiting = auth.waitForStatus(sceneStr, { timeoutMs: 10_000 })
      const scan = await auth.handleScan({ sceneStr, openid: 'alice' })
      expect(await waiting).toEqual({ status: 'scanned' })
      const ticket = (scan as { ticket: string }).ticket
      const csrf = await openedBy(auth, oauth, ticket)
      const decision = auth.waitForStatus(sceneStr, { timeoutMs: 10_000, seen: 'scanned' })
      const unseen = auth.waitForStatus(sceneStr, { timeoutMs: 10_000 })
      await auth.decideConfirmation({ ticket, csrf, decision: 'deny' })
      expect(await decision).toEqual({ status: 'denied' })
      expect(await unseen).toEqual({ status: 'denied' })
    })
  })

  describe('poll secret (B-secret-1…4)', () => {
    it('B-secret-1: a scene gets a poll secret; only its digest is stored', async () => {
      const ctx = get()
      const auth = confirmingAuth(ctx, ctx.store, new TestWebOAuth(), { requirePollSecret: true })
      const created = await auth.createScene({ deviceId: 'tv' })
      expect(created.pollSecret).toMatch(/^[A-Za-z0-9_-]{43}$/)
      const snapshot = await ctx.dump()
      expect(sceneIn(snapshot, created.sceneStr).pollSecretHash).toMatch(/^[A-Za-z0-9_-]{43}$/)
      expect(JSON.stringify(snapshot)).not.toContain(created.pollSecret)
      expect((await ctx.auth.createScene({ deviceId: 'tv' })).pollSecret).toBeUndefined()
    })

    it('B-secret-2: the session token goes only to a poll with the secret; other answers to anyone', async () => {
      const ctx = get()
      const auth = createScanAuth({ store: ctx.store, qr: ctx.qr, now: ctx.clock.now, requirePollSecret: true })
      const { sceneStr, pollSecret } = await auth.createScene({ deviceId: 'tv' })
      expect(await auth.getStatus(sceneStr)).toEqual({ status: 'pending' })
      await auth.handleScan({ sceneStr, openid: 'alice' })
      await expectScanAuthError(auth.getStatus(sceneStr), 'poll_secret_required', 403)
      await expectScanAuthError(auth.getStatus(sceneStr, { pollSecret: 'C'.repeat(43) }), 'poll_secret_required', 403)
      await expectScanAuthError(auth.waitForStatus(sceneStr, { timeoutMs: 1000 }), 'poll_secret_required', 403)
      expect(await auth.getStatus(sceneStr, { pollSecret })).toMatchObject({ status: 'authorized', sessionToken: expect.any(String) })
      expect(await auth.waitForStatus(sceneStr, { timeoutMs: 1000, pollSecret })).toMatchObject({ status: 'authorized' })
    })
  })
}
