// The callback as a function (its framework-neutral contract): verification, authenticity checks,
// event mapping, replies, duplicates. The end-to-end tests drive it over HTTP from the emulator.
import type { ScanInput, ScanResult } from '@scanauth/core'
import { describe, expect, it } from 'vitest'
import { computeSignature, createWechatCallback, decodeAesKey, decryptMessage, encryptMessage, type WechatCallbackOptions, type WechatMessage } from '../src/index'
import { buildXml, parseXml } from '../src/xml'
import { VECTOR, manualClock } from './helpers'

const TOKEN = 'tok3n'
const APP_ID = 'wx0123456789abcdef'
const KEY = 'Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8L9z0X1c'
const ACCOUNT = 'gh_0123456789ab'

/** A stand-in for core's handleScan that records its calls (core itself runs in the end-to-end tests). */
function recordingAuth(result: ScanResult | ((input: ScanInput) => Promise<ScanResult>) = { result: 'authorized', userId: 1 }) {
  const calls: ScanInput[] = []
  return {
    calls,
    auth: {
      async handleScan(input: ScanInput): Promise<ScanResult> {
        calls.push(input)
        return typeof result === 'function' ? result(input) : result
      },
    },
  }
}

function setup(options: Partial<WechatCallbackOptions> = {}, result?: Parameters<typeof recordingAuth>[0]) {
  const clock = manualClock()
  const { auth, calls } = recordingAuth(result)
  const messages: WechatMessage[] = []
  const errors: unknown[] = []
  const callback = createWechatCallback({
    auth,
    token: TOKEN,
    appId: APP_ID,
    now: clock.now,
    onMessage: (message) => void messages.push(message),
    onError: (error) => void errors.push(error),
    ...options,
  })
  let n = 0
  /** A signed query for now (or `at`), with a fresh nonce. */
  const query = (extra: Record<string, string> = {}, at = clock.now()) => {
    const timestamp = String(Math.floor(at / 1000))
    const nonce = String(100000 + n++)
    return { signature: computeSignature(TOKEN, timestamp, nonce), timestamp, nonce, ...extra }
  }
  const event = (fields: Record<string, string | number>) =>
    buildXml({ ToUserName: ACCOUNT, FromUserName: 'o_user', CreateTime: Math.floor(clock.now() / 1000), MsgType: 'event', ...fields })
  return { clock, calls, messages, errors, callback, query, event }
}

describe('URL verification (GET)', () => {
  it('echoes echostr for the official vector', async () => {
    const callback = createWechatCallback({ auth: recordingAuth().auth, token: 'AAAAA', appId: APP_ID, now: () => 1714036504_000 })
    const query = { signature: 'f464b24fc39322e44b38aa78f5edd27bd1441696', timestamp: '1714036504', nonce: '1514711492', echostr: '4375120948345356249' }
    expect(await callback({ method: 'GET', query })).toMatchObject({ status: 200, body: '4375120948345356249' })
    expect((await callback({ method: 'GET', query: { ...query, signature: 'f'.repeat(40) } })).status).toBe(401)
    expect((await callback({ method: 'GET', query: { echostr: 'x' } })).status).toBe(401)
    expect((await callback({ method: 'GET', query: new URLSearchParams(query) })).body).toBe('4375120948345356249')
  })

  it('refuses a stale timestamp and a missing echostr', async () => {
    const { callback, query, clock } = setup()
    expect((await callback({ method: 'GET', query: query({ echostr: 'e' }, clock.now() - 301_000) })).status).toBe(403)
    expect((await callback({ method: 'GET', query: query() })).status).toBe(400)
    expect((await callback({ method: 'PUT', query: query() })).status).toBe(405)
  })
})

describe('scan events (plain mode)', () => {
  it('SCAN: the raw EventKey is the scene; the default reply is a text in seconds', async () => {
    const { callback, query, event, calls, clock } = setup()
    const res = await callback({ method: 'POST', query: query(), body: event({ Event: 'SCAN', EventKey: 'pc_abc', Ticket: 't' }) })
    expect(calls).toEqual([{ sceneStr: 'pc_abc', openid: 'o_user' }])
    expect(res.status).toBe(200)
    expect(res.headers['content-type']).toMatch(/xml/)
    expect(parseXml(res.body)).toEqual({ ToUserName: 'o_user', FromUserName: ACCOUNT, CreateTime: String(Math.floor(clock.now() / 1000)), MsgType: 'text', Content: 'Signed in.' })
  })

  it('subscribe: strips only a leading qrscene_; a plain follow goes to onMessage', async () => {
    const { callback, query, event, calls, messages } = setup()
    await callback({ method: 'POST', query: query(), body: event({ Event: 'subscribe', EventKey: 'qrscene_qrscene_x', Ticket: 't' }) })
    await callback({ method: 'POST', query: query(), body: event({ Event: 'subscribe', EventKey: 'pc_qrscene_y', CreateTime: 1 }) })
    await callback({ method: 'POST', query: query(), body: event({ Event: 'subscribe', CreateTime: 2 }) })
    expect(calls).toEqual([{ sceneStr: 'qrscene_x', openid: 'o_user' }])
    expect(messages.map((m) => m.EventKey)).toEqual(['pc_qrscene_y', undefined])
  })

  it('replies per result, through a custom reply, or not at all', async () => {
    const needPurchase = setup({}, { result: 'need_purchase', userId: 2 })
    const res = await needPurchase.callback({ method: 'POST', query: needPurchase.query(), body: needPurchase.event({ Event: 'SCAN', EventKey: 's' }) })
    expect(parseXml(res.body).Content).toBe('Please purchase to continue.')

    const custom = setup({ reply: (r) => (r.result === 'authorized' ? 'ok ]]> done' : null) })
    const a = await custom.callback({ method: 'POST', query: custom.query(), body: custom.event({ Event: 'SCAN', EventKey: 's' }) })
    expect(parseXml(a.body).Content).toBe('ok ]]> done')

    const silent = setup({ reply: false })
    const b = await silent.callback({ method: 'POST', query: silent.query(), body: silent.event({ Event: 'SCAN', EventKey: 's' }) })
    expect(b).toMatchObject({ status: 200, body: 'success' })
  })

  it('other messages go to onMessage; its string becomes the reply', async () => {
    const { callback, query, clock } = setup({ onMessage: (m) => (m.MsgType === 'text' ? `echo: ${m.Content}` : undefined) })
    const text = buildXml({ ToUserName: ACCOUNT, FromUserName: 'o_u', CreateTime: Math.floor(clock.now() / 1000), MsgType: 'text', Content: 'hi & <bye>', MsgId: '6054768590064713728' })
    expect(parseXml((await callback({ method: 'POST', query: query(), body: text })).body).Content).toBe('echo: hi & <bye>')
    const click = buildXml({ ToUserName: ACCOUNT, FromUserName: 'o_u', CreateTime: 5, MsgType: 'event', Event: 'CLICK', EventKey: 'K' })
    expect((await callback({ method: 'POST', query: query(), body: click })).body).toBe('success')
  })

  it('a duplicate delivery gets the same reply and reaches core once', async () => {
    let n = 0
    const { callback, query, event, calls } = setup({ reply: () => `reply ${++n}` })
    const body = event({ Event: 'SCAN', EventKey: 'pc_dup' })
    const first = await callback({ method: 'POST', query: query(), body })
    const again = await callback({ method: 'POST', query: query(), body: Buffer.from(body) })
    expect(calls).toHaveLength(1)
    expect(parseXml(again.body).Content).toBe('reply 1')
    expect(parseXml(first.body).Content).toBe('reply 1')
  })

  it('concurrent duplicates share one processing', async () => {
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const { callback, query, event, calls } = setup({}, async () => {
      await gate
      return { result: 'authorized', userId: 1 }
    })
    const body = event({ Event: 'SCAN', EventKey: 'pc_same' })
    const pending = [callback({ method: 'POST', query: query(), body }), callback({ method: 'POST', query: query(), body })]
    release()
    const answers = await Promise.all(pending)
    expect(calls).toHaveLength(1)
    expect(answers[0]?.body).toBe(answers[1]?.body)
  })

  it('answers success before the deadline when core is slow; a retry after it finished gets the reply', async () => {
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const { callback, query, event, calls } = setup({ replyDeadlineMs: 20 }, async () => {
      await gate
      return { result: 'authorized', userId: 1 }
    })
    const body = event({ Event: 'SCAN', EventKey: 'pc_slow' })
    expect((await callback({ method: 'POST', query: query(), body })).body).toBe('success')
    release()
    await gate
    const retry = await callback({ method: 'POST', query: query(), body })
    expect(calls).toHaveLength(1)
    expect(parseXml(retry.body).Content).toBe('Signed in.')
  })

  it("core's invalid_request is an invalid scan; any other failure is a 500 that a retry processes again", async () => {
    const rejected = setup({}, async () => Promise.reject(Object.assign(new Error('openid too long'), { code: 'invalid_request' })))
    const r = await rejected.callback({ method: 'POST', query: rejected.query(), body: rejected.event({ Event: 'SCAN', EventKey: 's' }) })
    expect(parseXml(r.body).Content).toMatch(/expired or was already used/)

    let fail = true
    const flaky = setup({}, async () => {
      if (fail) throw new Error('store down')
      return { result: 'authorized', userId: 1 }
    })
    const body = flaky.event({ Event: 'SCAN', EventKey: 's' })
    expect((await flaky.callback({ method: 'POST', query: flaky.query(), body })).status).toBe(500)
    expect(flaky.errors).toHaveLength(1)
    fail = false
    expect(parseXml((await flaky.callback({ method: 'POST', query: flaky.query(), body })).body).Content).toBe('Signed in.')
    expect(flaky.calls).toHaveLength(2)
  })
})

describe('refused pushes: 4xx, nothing processed', () => {
  it('bad or missing signature, stale or future timestamp', async () => {
    const { callback, query, event, calls, clock } = setup()
    const body = event({ Event: 'SCAN', EventKey: 's' })
    expect((await callback({ method: 'POST', query: { ...query(), signature: '0'.repeat(40) }, body })).status).toBe(401)
    expect((await callback({ method: 'POST', query: {}, body })).status).toBe(401)
    expect((await callback({ method: 'POST', query: query({}, clock.now() - 301_000), body })).status).toBe(403)
    expect((await callback({ method: 'POST', query: query({}, clock.now() + 301_000), body })).status).toBe(403)
    expect(calls).toHaveLength(0)
  })

  it('a replayed request is refused once it leaves the window', async () => {
    const { callback, query, event, calls, clock } = setup()
    const request = { method: 'POST', query: query(), body: event({ Event: 'SCAN', EventKey: 's' }) }
    expect((await callback(request)).status).toBe(200)
    clock.advance(301_000)
    expect((await callback(request)).status).toBe(403)
    expect(calls).toHaveLength(1)
  })

  it('a signed nonce cannot carry a different body', async () => {
    const { callback, query, event, calls } = setup()
    const q = query()
    expect((await callback({ method: 'POST', query: q, body: event({ Event: 'SCAN', EventKey: 'pc_1' }) })).status).toBe(200)
    const forged = await callback({ method: 'POST', query: q, body: event({ Event: 'SCAN', EventKey: 'pc_2', FromUserName: 'o_attacker' }) })
    expect(forged.status).toBe(403)
    expect(calls).toEqual([{ sceneStr: 'pc_1', openid: 'o_user' }])
  })

  it('XXE, malformed XML, parsed bodies, empty and oversize bodies', async () => {
    const { callback, query, calls, messages } = setup({ maxBodyBytes: 2048 })
    const xxe = `<?xml version="1.0"?><!DOCTYPE xml [<!ENTITY x SYSTEM "file:///etc/passwd">]><xml><ToUserName>a</ToUserName><FromUserName>&x;</FromUserName><CreateTime>1</CreateTime><MsgType>event</MsgType><Event>SCAN</Event><EventKey>s</EventKey></xml>`
    const bomb = `<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]><xml><FromUserName>&lol2;</FromUserName></xml>`
    for (const body of [xxe, bomb, '<xml><A>1</A>', 'success', '{"MsgType":"event"}', '<xml><A>1</A></xml>']) {
      expect((await callback({ method: 'POST', query: query(), body })).status).toBe(400)
    }
    expect((await callback({ method: 'POST', query: query(), body: { xml: {} } })).status).toBe(400)
    expect((await callback({ method: 'POST', query: query(), body: '' })).status).toBe(400)
    expect((await callback({ method: 'POST', query: query(), body: `<xml>${'a'.repeat(4096)}</xml>` })).status).toBe(413)
    expect((await callback({ method: 'POST', query: query(), body: Buffer.alloc(4096, 0x61) })).status).toBe(413)
    expect(calls).toHaveLength(0)
    expect(messages).toHaveLength(0)
  })

  it('requireEncryption refuses plain pushes', async () => {
    const { callback, query, event, calls } = setup({ encodingAESKey: KEY, requireEncryption: true })
    expect((await callback({ method: 'POST', query: query(), body: event({ Event: 'SCAN', EventKey: 's' }) })).status).toBe(403)
    expect(calls).toHaveLength(0)
  })

  it('checks options', () => {
    const auth = recordingAuth().auth
    expect(() => createWechatCallback({ auth, token: '', appId: APP_ID })).toThrow(/token/)
    expect(() => createWechatCallback({ auth, token: TOKEN, appId: APP_ID, encodingAESKey: 'short' })).toThrow(/encodingAESKey/)
    expect(() => createWechatCallback({ auth: {} as never, token: TOKEN, appId: APP_ID })).toThrow(/handleScan/)
    expect(() => createWechatCallback({ auth, token: TOKEN, appId: APP_ID, requireEncryption: true })).toThrow(/encodingAESKey/)
  })
})

describe('safe mode', () => {
  const officialBody = buildXml({ ToUserName: 'gh_10f6c3c3ac5a', Encrypt: VECTOR.encrypt })
  const officialQuery = { signature: VECTOR.signature, timestamp: VECTOR.timestamp, nonce: VECTOR.nonce, encrypt_type: 'aes', msg_signature: VECTOR.msgSignature, openid: 'oyORnuP8q7ou2gfYjqLzSIWZf0rs' }
  const officialOptions = (extra: Partial<WechatCallbackOptions> = {}) => ({
    auth: recordingAuth().auth,
    token: VECTOR.token,
    appId: VECTOR.appId,
    encodingAESKey: VECTOR.encodingAESKey,
    now: () => Number(VECTOR.timestamp) * 1000,
    ...extra,
  })

  it('opens the official push and encrypts the reply so that it verifies and decrypts', async () => {
    const seen: WechatMessage[] = []
    const callback = createWechatCallback(officialOptions({ onMessage: (m, context) => (seen.push(m), context.encrypted ? 'got it' : 'plain?') }))
    const res = await callback({ method: 'POST', query: officialQuery, body: officialBody })
    expect(seen[0]).toMatchObject({ FromUserName: 'oyORnuP8q7ou2gfYjqLzSIWZf0rs', MsgType: 'text', Content: 'abcdteT', MsgId: '6054768590064713728' })
    const outer = parseXml(res.body) as Record<string, string>
    expect(Object.keys(outer)).toEqual(['Encrypt', 'MsgSignature', 'TimeStamp', 'Nonce'])
    expect(outer.MsgSignature).toBe(computeSignature(VECTOR.token, outer.TimeStamp!, outer.Nonce!, outer.Encrypt!))
    const inner = decryptMessage(decodeAesKey(VECTOR.encodingAESKey), outer.Encrypt!)
    expect(inner.appId).toBe(VECTOR.appId)
    expect(parseXml(inner.message)).toMatchObject({ ToUserName: 'oyORnuP8q7ou2gfYjqLzSIWZf0rs', FromUserName: 'gh_10f6c3c3ac5a', MsgType: 'text', Content: 'got it' })
  })

  it('refuses a bad msg_signature, another appid, an undecryptable Encrypt', async () => {
    const seen: WechatMessage[] = []
    const onMessage = (m: WechatMessage) => void seen.push(m)
    const callback = createWechatCallback(officialOptions({ onMessage }))
    expect((await callback({ method: 'POST', query: { ...officialQuery, msg_signature: VECTOR.signature }, body: officialBody })).status).toBe(401)
    const { msg_signature: _dropped, ...noMsgSignature } = officialQuery
    expect((await callback({ method: 'POST', query: noMsgSignature, body: officialBody })).status).toBe(401)
    const otherApp = createWechatCallback(officialOptions({ appId: 'wx_other', onMessage }))
    expect((await otherApp({ method: 'POST', query: officialQuery, body: officialBody })).status).toBe(403)
    const otherKey = createWechatCallback(officialOptions({ encodingAESKey: KEY, onMessage }))
    expect([400, 403]).toContain((await otherKey({ method: 'POST', query: officialQuery, body: officialBody })).status)
    expect(seen).toHaveLength(0)
  })

  it('accepts the previous key during a key change and replies with the key that worked', async () => {
    const callback = createWechatCallback(officialOptions({ encodingAESKey: KEY, previousEncodingAESKey: VECTOR.encodingAESKey, onMessage: () => 'ok' }))
    const res = await callback({ method: 'POST', query: officialQuery, body: officialBody })
    const outer = parseXml(res.body) as Record<string, string>
    expect(parseXml(decryptMessage(decodeAesKey(VECTOR.encodingAESKey), outer.Encrypt!).message).Content).toBe('ok')
  })

  it('compatible mode: decrypts when it has the key (ignoring the plain fields), reads the plain fields when not', async () => {
    const { clock, query, calls, callback } = setup({ encodingAESKey: KEY })
    const key = decodeAesKey(KEY)
    const at = Math.floor(clock.now() / 1000)
    const real = buildXml({ ToUserName: ACCOUNT, FromUserName: 'o_real', CreateTime: at, MsgType: 'event', Event: 'SCAN', EventKey: 'pc_real' })
    const encrypt = encryptMessage(key, APP_ID, real)
    // The plain fields say something else: only the authenticated ciphertext counts.
    const body = buildXml({ ToUserName: ACCOUNT, FromUserName: 'o_fake', CreateTime: at, MsgType: 'event', Event: 'SCAN', EventKey: 'pc_fake', Encrypt: encrypt })
    const q = query()
    const res = await callback({ method: 'POST', query: { ...q, encrypt_type: 'aes', msg_signature: computeSignature(TOKEN, q.timestamp, q.nonce, encrypt) }, body })
    expect(calls).toEqual([{ sceneStr: 'pc_real', openid: 'o_real' }])
    expect(parseXml(res.body).Encrypt).toBeTypeOf('string')

    const keyless = setup()
    const q2 = keyless.query()
    const plain = await keyless.callback({ method: 'POST', query: { ...q2, encrypt_type: 'aes', msg_signature: computeSignature(TOKEN, q2.timestamp, q2.nonce, encrypt) }, body })
    expect(keyless.calls).toEqual([{ sceneStr: 'pc_fake', openid: 'o_fake' }])
    expect(parseXml(plain.body).Content).toBe('Signed in.')
  })

  it('an encrypted body with DOCTYPE inside is refused too', async () => {
    const { clock, query, calls, callback } = setup({ encodingAESKey: KEY })
    const inner = `<!DOCTYPE xml [<!ENTITY x SYSTEM "file:///etc/passwd">]><xml><ToUserName>a</ToUserName><FromUserName>&x;</FromUserName><CreateTime>${Math.floor(clock.now() / 1000)}</CreateTime><MsgType>event</MsgType><Event>SCAN</Event><EventKey>s</EventKey></xml>`
    const encrypt = encryptMessage(decodeAesKey(KEY), APP_ID, inner)
    const q = query()
    const res = await callback({ method: 'POST', query: { ...q, encrypt_type: 'aes', msg_signature: computeSignature(TOKEN, q.timestamp, q.nonce, encrypt) }, body: buildXml({ ToUserName: ACCOUNT, Encrypt: encrypt }) })
    expect(res.status).toBe(400)
    expect(calls).toHaveLength(0)
  })
})
