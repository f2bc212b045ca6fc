// The callback as a function (its framework-neutral contract): verification, authenticity checks in
// their order (B-wx-1 … B-wx-3), event mapping, replies, safe mode. Replay and duplicate records are in
// callback-replay.test.ts; the end-to-end tests drive it over HTTP from the emulator.
import { describe, expect, it } from 'vitest'
import { computeSignature, createWechatCallback, decodeAesKey, decryptMessage, encryptMessage, type WechatCallbackOptions, type WechatMessage } from '../src/index'
import { buildXml, parseXml } from '../src/xml'
import { ACCOUNT, APP_ID, KEY, TOKEN, recordingAuth, setup } from './callback-setup'
import { VECTOR } from './helpers'

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

  it('checks the form of a signed timestamp and nonce (B-wx-1)', async () => {
    const { callback } = setup()
    const signed = (timestamp: string, nonce: string) => ({ signature: computeSignature(TOKEN, timestamp, nonce), timestamp, nonce, echostr: 'e' })
    expect((await callback({ method: 'GET', query: signed('12ab', '1') })).body).toBe('invalid timestamp')
    for (const nonce of ['a:b', 'x'.repeat(65), 'é']) {
      expect(await callback({ method: 'GET', query: signed('1772352000', nonce) })).toMatchObject({ status: 400, body: 'invalid nonce' })
    }
    // The form is looked at only once the signature holds: a forged one is 401 whatever it carries.
    expect((await callback({ method: 'GET', query: { ...signed('12ab', 'a:b'), signature: '0'.repeat(40) } })).status).toBe(401)
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

  it('XXE, malformed XML, and XML that is not a message: 400 (B-wx-3)', async () => {
    const { callback, query, calls, messages } = setup({ maxBodyBytes: 2048 })
    const xxe = `<?xml version="1.0"?><!DOCTYPE xml [<!ENTITY x SYSTEM "file:///etc/passwd">]><xml><ToUserName>a</ToUserName><FromUserName>&x;</FromUserName><CreateTime>1</CreateTime><MsgType>event</MsgType><Event>SCAN</Event><EventKey>s</EventKey></xml>`
    const bomb = `<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]><xml><FromUserName>&lol2;</FromUserName></xml>`
    for (const body of [xxe, bomb, '<xml><A>1</A>', '<xml><A>1</A></xml>', '<root/>', '\uFEFF  <xml><A>1</A>']) {
      expect((await callback({ method: 'POST', query: query(), body })).status).toBe(400)
    }
    expect(calls).toHaveLength(0)
    expect(messages).toHaveLength(0)
  })

  it('a body that is not raw XML: a parsed object or JSON/form text is 415, empty 400, too large 413 (B-wx-3)', async () => {
    const { callback, query, calls, messages } = setup({ maxBodyBytes: 2048 })
    const answer = (body: unknown) => callback({ method: 'POST', query: query(), body })
    for (const body of [{ xml: {} }, { MsgType: 'event' }, [], 42, true]) {
      expect(await answer(body)).toMatchObject({ status: 415, body: expect.stringMatching(/raw XML body is required/) })
    }
    for (const body of ['{"MsgType":"event"}', 'success', 'a=1&b=2', Buffer.from('[1]')]) {
      expect(await answer(body)).toMatchObject({ status: 415, body: 'the body is not XML' })
    }
    expect(await answer('')).toMatchObject({ status: 400, body: 'body is empty' })
    expect(await answer(new Uint8Array())).toMatchObject({ status: 400, body: 'body is empty' })
    expect(await answer(undefined)).toMatchObject({ status: 400, body: 'body is empty' })
    expect((await answer(`<xml>${'a'.repeat(4096)}</xml>`)).status).toBe(413)
    expect((await answer(Buffer.alloc(4096, 0x61))).status).toBe(413)
    expect(calls).toHaveLength(0)
    expect(messages).toHaveLength(0)
  })

  it('checks the signature before it looks at the body (B-wx-1)', async () => {
    const { callback, query, clock } = setup({ maxBodyBytes: 16 })
    for (const body of [{ parsed: true }, '{"json":1}', '', 'x'.repeat(100), '<!DOCTYPE x><xml/>']) {
      expect((await callback({ method: 'POST', query: {}, body })).status).toBe(401)
      expect((await callback({ method: 'POST', query: { ...query(), signature: 'f'.repeat(40) }, body })).status).toBe(401)
      expect((await callback({ method: 'POST', query: query({}, clock.now() - 400_000), body })).status).toBe(403)
    }
  })

  it('checks options', () => {
    const auth = recordingAuth().auth
    expect(() => createWechatCallback({ auth, token: '', appId: APP_ID })).toThrow(/token/)
    expect(() => createWechatCallback({ auth, token: TOKEN, appId: APP_ID, encodingAESKey: 'short' })).toThrow(/encodingAESKey/)
    expect(() => createWechatCallback({ auth: {} as never, token: TOKEN, appId: APP_ID })).toThrow(/handleScan/)
    expect(() => createWechatCallback({ auth, token: TOKEN, appId: APP_ID, requireEncryption: true })).toThrow(/encodingAESKey/)
    expect(() => createWechatCallback({ auth, token: TOKEN, appId: APP_ID, store: {} as never })).toThrow(/store must implement incrementCounter/)
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

  it('with a key, safe mode is required by default: plain pushes are 403, compatible ones accepted (B-wx-2)', async () => {
    const { clock, query, event, calls, callback } = setup({ encodingAESKey: KEY })
    const plain = event({ Event: 'SCAN', EventKey: 'pc_plain' })
    expect(await callback({ method: 'POST', query: query(), body: plain })).toMatchObject({ status: 403, body: 'plain pushes are refused: encryption is required' })
    // encrypt_type=aes without the ciphertext is no way around it.
    expect((await callback({ method: 'POST', query: query({ encrypt_type: 'aes', msg_signature: 'x' }), body: plain })).status).toBe(400)
    expect(calls).toHaveLength(0)
    const encrypt = encryptMessage(decodeAesKey(KEY), APP_ID, event({ Event: 'SCAN', EventKey: 'pc_compat', CreateTime: Math.floor(clock.now() / 1000) + 1 }))
    const q = query()
    const compatible = buildXml({ ToUserName: ACCOUNT, FromUserName: 'o_user', CreateTime: 1, MsgType: 'event', Event: 'SCAN', EventKey: 'pc_compat', Encrypt: encrypt })
    const res = await callback({ method: 'POST', query: { ...q, encrypt_type: 'aes', msg_signature: computeSignature(TOKEN, q.timestamp, q.nonce, encrypt) }, body: compatible })
    expect(res.status).toBe(200)
    expect(calls).toEqual([{ sceneStr: 'pc_compat', openid: 'o_user' }])
  })

  it('requireEncryption: false accepts plain pushes beside a key, for the switch to safe mode (B-wx-2)', async () => {
    const { query, event, calls, callback } = setup({ encodingAESKey: KEY, requireEncryption: false })
    const res = await callback({ method: 'POST', query: query(), body: event({ Event: 'SCAN', EventKey: 'pc_plain' }) })
    expect(res.status).toBe(200)
    expect(parseXml(res.body).Content).toBe('Signed in.')
    expect(calls).toEqual([{ sceneStr: 'pc_plain', openid: 'o_user' }])
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
