// The reply to a need_purchase scan end to end over real HTTP: core (MemoryStore, selling, with or
// without `payments.phone`) behind the callback on a node:http server, the emulator pushing the scans
// and reading the reply as WeChat would, in plain and safe mode. (Beside e2e.test.ts rather than in
// it: that file's retry test depends on a push timeout the emulator can lose to garbage collection.)
import { createScanAuth, MemoryStore, type PaymentProvider, type ScanEvent } from '@scanauth/core'
import { afterEach, describe, expect, it } from 'vitest'
import { startWechatEmulator } from '@scanauth/wechat-emulator'
import { createWechatCallback, createWechatQrProvider, createWechatWebOAuth, DEFAULT_REPLY_TEXTS, needPurchaseReplyText } from '../src/index'
import { closer, manualClock, serveCallback } from './helpers'

const ACCOUNT = { appId: 'wx_e2e_0000000002', appSecret: 'e2e-secret', token: 'e2eToken' }
const KEY = 'e2eKEYe2eKEYe2eKEYe2eKEYe2eKEYe2eKEYe2eKEY0'
/** The phone pages' address (nothing serves it: only the reply's link is looked at). */
const PHONE_URL = 'https://app.example.test/auth/m/'
const DAY = 24 * 3600 * 1000
const resources = closer()
afterEach(() => resources.closeAll())

/** A payment service that is never reached: a scan that answers need_purchase opens no order. */
const unreachable = () => Promise.reject(new Error('no order in these tests'))
const payments: PaymentProvider = {
  merchant: { mchid: '1900000109', appid: ACCOUNT.appId },
  createNativeOrder: unreachable,
  createJsapiOrder: unreachable,
  queryOrder: unreachable,
  closeOrder: unreachable,
}

/** A selling service behind the callback; `phone` adds `payments.phone`. */
async function world(mode: 'plain' | 'safe', phone: boolean) {
  const clock = manualClock()
  const encodingAESKey = mode === 'safe' ? KEY : undefined
  const emulator = resources.add(await startWechatEmulator({ ...ACCOUNT, encodingAESKey, now: clock.now }))
  const store = new MemoryStore()
  const scans: ScanEvent[] = []
  const auth = createScanAuth({
    store,
    qr: createWechatQrProvider({ appId: ACCOUNT.appId, appSecret: ACCOUNT.appSecret, apiBaseUrl: emulator.url, now: clock.now }),
    now: clock.now,
    hooks: { onScan: (e) => void scans.push(e) },
    payments: {
      provider: payments,
      plans: [{ id: 'days-30', description: '30 days', amountFen: 1990, grant: { type: 'time', days: 30 } }],
      ...(phone ? { phone: { url: PHONE_URL, oauth: createWechatWebOAuth(emulator.webOAuthOptions()) } } : {}),
    },
  })
  const callback = createWechatCallback({ auth, store, token: ACCOUNT.token, appId: ACCOUNT.appId, encodingAESKey, now: clock.now })
  emulator.setCallbackUrl(resources.add(await serveCallback(callback)).url)

  /** The reply to `openid`'s scan of a new scene once their free trial is over (need_purchase). */
  async function needPurchaseReply(openid: string) {
    const trial = await auth.createScene({ deviceId: 'tv-1' })
    expect((await emulator.scan({ sceneStr: trial.sceneStr, openid })).reply?.Content).toBe('Signed in.')
    clock.advance(8 * DAY)
    const scene = await auth.createScene({ deviceId: 'tv-2' })
    const pushed = await emulator.scan({ sceneStr: scene.sceneStr, openid })
    expect(pushed).toMatchObject({ status: 200, replyError: null, attempts: 1, reply: { MsgType: 'text', ToUserName: openid, encrypted: mode === 'safe' } })
    expect(await auth.getStatus(scene.sceneStr)).toEqual({ status: 'need_purchase' })
    return pushed.reply?.Content ?? ''
  }
  return { scans, needPurchaseReply }
}

describe.each(['plain', 'safe'] as const)('%s mode: the reply to a need_purchase scan', (mode) => {
  it('with payments.phone: the text and the link to buy on the phone; the hook never hears the link', async () => {
    const { scans, needPurchaseReply } = await world(mode, true)
    const content = await needPurchaseReply('o_buyer')
    // The link as WeChat opens it (the text is HTML: `&amp;` is `&`).
    const payUrl = (/<a href="([^"]*)">/.exec(content)?.[1] ?? '').replace(/&amp;/g, '&')
    expect(payUrl).toMatch(/^https:\/\/app\.example\.test\/auth\/m\/pay\?ticket=[A-Za-z0-9_-]{43}$/)
    expect(content).toBe(needPurchaseReplyText(payUrl))
    expect(scans.map((s) => s.result)).toEqual(['authorized', 'need_purchase'])
    expect(JSON.stringify(scans)).not.toContain(new URL(payUrl).searchParams.get('ticket') as string)
  })

  it('without payments.phone: the fixed text, no link', async () => {
    const { needPurchaseReply } = await world(mode, false)
    expect(await needPurchaseReply('o_buyer')).toBe(DEFAULT_REPLY_TEXTS.need_purchase)
  })
})
