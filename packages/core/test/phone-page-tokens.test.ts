// The plans pages' CSRF tokens over time (docs/behaviour.md, B-phone-5): only the page shown last
// buys, also across the end of the window that numbers a person's pages, whatever the time between
// pages. The contract suite (testkit's phone-pay) has the rest on every store; this is the clock's edge.
import { describe, expect, it } from 'vitest'
import { createScanAuth, MemoryStore, type ScanAuth } from '@scanauth/core'
import { ManualClock, RecordingQrProvider, TestPaymentService, TestWebOAuth } from '@scanauth/testkit'

const MINUTE = 60_000
const WECHAT = 'Mozilla/5.0 (iPhone) AppleWebKit/605.1.15 Mobile/15E148 MicroMessenger/8.0.50 NetType/WIFI'
const PLANS = [{ id: 'days-30', description: '30 days', amountFen: 1990, grant: { type: 'time' as const, days: 30 } }]

function world() {
  const clock = new ManualClock()
  const service = new TestPaymentService(clock.now)
  const oauth = new TestWebOAuth()
  const auth: ScanAuth = createScanAuth({
    store: new MemoryStore(),
    qr: new RecordingQrProvider(),
    now: clock.now,
    rateLimits: false,
    payments: { provider: service, plans: PLANS, phone: { url: 'https://app.example.test/auth/m/', oauth } },
  })
  /** The token of a plans page (the person's own, no ticket) shown to `openid` now. */
  async function page(openid = 'alice'): Promise<string> {
    const first = await auth.openPhonePay({ userAgent: WECHAT })
    if (first.step !== 'authorize') throw new Error(`expected the OAuth redirect, got ${first.step}`)
    const state = new URL(first.location).searchParams.get('state') as string
    const step = await auth.openPhonePay({ code: oauth.issueCode(openid), state, userAgent: WECHAT })
    if (step.step !== 'plans') throw new Error(`expected the plans page, got ${step.step}`)
    return step.view.csrf
  }
  /** What choosing the plan on the page of `csrf` comes to: the cashier, or the refusal's code. */
  async function buy(csrf: string): Promise<string> {
    return auth.choosePhonePlan({ csrf, plan: 'days-30' }).then(
      (step) => step.step,
      (error: unknown) => (error as { code: string }).code,
    )
  }
  return { clock, auth, page, buy }
}

describe('the page shown last buys (B-phone-5)', () => {
  it('a later page replaces the earlier one, and a page lives 30 minutes', async () => {
    const w = world()
    await w.auth.handleScan({ sceneStr: (await w.auth.createScene({ deviceId: 'tv' })).sceneStr, openid: 'alice' })
    const a = await w.page()
    const b = await w.page()
    expect(await w.buy(a)).toBe('phone_csrf_invalid')
    expect(await w.buy(b)).toBe('cashier')
    w.clock.advance(30 * MINUTE)
    expect(await w.buy(b)).toBe('phone_csrf_invalid')
  })

  it.each([
    ['1 minute', 1],
    ['7 minutes', 7],
    ['29 minutes', 29],
    ['29 minutes 59.999 seconds', 30 - 1 / 60_000],
    ['30 minutes', 30],
    ['31 minutes', 31],
    ['59 minutes', 59],
  ])('pages %s apart, for two hours: each new page ends every earlier one', async (_name, gap) => {
    const w = world()
    await w.auth.handleScan({ sceneStr: (await w.auth.createScene({ deviceId: 'tv' })).sceneStr, openid: 'alice' })
    // Not on a round minute: the clock's windows fall anywhere between two pages.
    w.clock.advance(17_321)
    const shown: string[] = []
    for (let at = 0; at <= 120; at += gap) {
      shown.push(await w.page())
      const last = shown.length - 1
      // Every earlier page, expired or still in its 30 minutes, is refused; the last one buys.
      for (let j = 0; j < last; j++) expect(await w.buy(shown[j] as string), `page ${j} after page ${last}, at ${at} minutes`).toBe('phone_csrf_invalid')
      expect(await w.buy(shown[last] as string), `page ${last}, at ${at} minutes`).toBe('cashier')
      w.clock.advance(gap * MINUTE)
    }
  })

  it('the last page buys for its whole 30 minutes, across the window that numbered it', async () => {
    const w = world()
    await w.auth.handleScan({ sceneStr: (await w.auth.createScene({ deviceId: 'tv' })).sceneStr, openid: 'alice' })
    w.clock.advance(29 * MINUTE)
    const page = await w.page()
    w.clock.advance(30 * MINUTE - 1)
    expect(await w.buy(page)).toBe('cashier')
    w.clock.advance(1)
    expect(await w.buy(page)).toBe('phone_csrf_invalid')
  })

  it("one person's pages do not end another's", async () => {
    const w = world()
    for (const openid of ['alice', 'bob']) await w.auth.handleScan({ sceneStr: (await w.auth.createScene({ deviceId: `tv-${openid}` })).sceneStr, openid })
    w.clock.advance(29 * MINUTE)
    const alice = await w.page('alice')
    await w.page('bob')
    w.clock.advance(2 * MINUTE)
    await w.page('bob')
    expect(await w.buy(alice)).toBe('cashier')
  })
})
