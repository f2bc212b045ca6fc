// The callback's replay and duplicate records (docs/behaviour.md B-wx-4 … B-wx-9) on a real
// MemoryStore: a signed request is used once, an event is processed once, records are shared by
// every callback on one store, deleted when processing fails, and expire. Two instances on one SQLite
// file and one Redis prefix are in shared-store.test.ts.
import { createHash } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MemoryStore } from '@scanauth/core'
import { SqliteStore } from '@scanauth/sqlite'
import { describe, expect, it } from 'vitest'
import { createWechatCallback } from '../src/index'
import { buildXml, parseXml } from '../src/xml'
import { ACCOUNT, APP_ID, TOKEN, recordingAuth, setup, signedQuery } from './callback-setup'

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')
/** A gate a test opens by hand, to hold handleScan while other requests arrive. */
function gate() {
  let open!: () => void
  const opened = new Promise<void>((resolve) => (open = resolve))
  return { opened, open }
}

describe('a signed request is used once (B-wx-4, B-wx-5)', () => {
  it('an identical retry is not processed again and gets the first reply', async () => {
    let n = 0
    const { callback, query, event, calls } = setup({ reply: () => `reply ${++n}` })
    const request = { method: 'POST', query: query(), body: event({ Event: 'SCAN', EventKey: 'pc_retry' }) }
    expect(parseXml((await callback(request)).body).Content).toBe('reply 1')
    expect(parseXml((await callback({ ...request, body: Buffer.from(request.body) })).body).Content).toBe('reply 1')
    expect(calls).toHaveLength(1)
  })

  it('another body under a used pair is 403, every time, and leaves the first request a retry', async () => {
    const { callback, query, event, calls } = setup()
    const q = query()
    const genuine = event({ Event: 'SCAN', EventKey: 'pc_1' })
    expect((await callback({ method: 'POST', query: q, body: genuine })).status).toBe(200)
    const forged = event({ Event: 'SCAN', EventKey: 'pc_2', FromUserName: 'o_attacker' })
    // Twice: the forgery's own record is deleted, so its second try is not taken for a retry.
    for (let i = 0; i < 2; i++) expect(await callback({ method: 'POST', query: q, body: forged })).toMatchObject({ status: 403, body: 'nonce was already used with another body' })
    expect(parseXml((await callback({ method: 'POST', query: q, body: genuine })).body).Content).toBe('Signed in.')
    expect(calls).toEqual([{ sceneStr: 'pc_1', openid: 'o_user' }])
  })

  it("the URL verification's query cannot carry a POST; repeating the verification itself is harmless", async () => {
    const { callback, query, event, calls } = setup()
    const q = query({ echostr: 'echo-1' })
    expect(await callback({ method: 'GET', query: q })).toMatchObject({ status: 200, body: 'echo-1' })
    expect(await callback({ method: 'GET', query: q })).toMatchObject({ status: 200, body: 'echo-1' })
    expect(await callback({ method: 'GET', query: { ...q, echostr: 'echo-2' } })).toMatchObject({ status: 403, body: 'nonce was already used' })
    expect((await callback({ method: 'POST', query: q, body: event({ Event: 'SCAN', EventKey: 'pc_forged' }) })).status).toBe(403)
    expect(calls).toHaveLength(0)
  })

  it("a push's query cannot verify", async () => {
    const { callback, query, event } = setup()
    const q = query()
    expect((await callback({ method: 'POST', query: q, body: event({ Event: 'SCAN', EventKey: 'pc_1' }) })).status).toBe(200)
    expect((await callback({ method: 'GET', query: { ...q, echostr: 'e' } })).status).toBe(403)
  })

  it('a replayed request is refused once it leaves the window', async () => {
    const { callback, query, event, calls, clock } = setup()
    const request = { method: 'POST', query: query(), body: event({ Event: 'SCAN', EventKey: 's' }) }
    expect((await callback(request)).status).toBe(200)
    clock.advance(301_000)
    expect((await callback(request)).status).toBe(403)
    expect(calls).toHaveLength(1)
  })
})

describe('an event is processed once (B-wx-6)', () => {
  it('a second delivery under a new nonce gets the same reply and reaches core once', async () => {
    let n = 0
    const { callback, query, event, calls } = setup({ reply: () => `reply ${++n}` })
    const body = event({ Event: 'SCAN', EventKey: 'pc_dup' })
    const first = await callback({ method: 'POST', query: query(), body })
    const again = await callback({ method: 'POST', query: query(), body })
    expect(calls).toHaveLength(1)
    expect([parseXml(first.body).Content, parseXml(again.body).Content]).toEqual(['reply 1', 'reply 1'])
  })

  it('concurrent duplicates share one processing', async () => {
    const held = gate()
    const { callback, query, event, calls } = setup({}, async () => (await held.opened, { result: 'authorized', userId: 1 }))
    const body = event({ Event: 'SCAN', EventKey: 'pc_same' })
    const pending = [callback({ method: 'POST', query: query(), body }), callback({ method: 'POST', query: query(), body })]
    held.open()
    const answers = await Promise.all(pending)
    expect(calls).toHaveLength(1)
    expect(answers[0]?.body).toBe(answers[1]?.body)
  })

  it('messages by MsgId; events by user, time, event and key', async () => {
    const { callback, query, event, messages, calls, clock } = setup()
    const text = (msgId: string) => buildXml({ ToUserName: ACCOUNT, FromUserName: 'o_u', CreateTime: Math.floor(clock.now() / 1000), MsgType: 'text', Content: 'hi', MsgId: msgId })
    for (const body of [text('1001'), text('1001'), text('1002')]) await callback({ method: 'POST', query: query(), body })
    expect(messages.map((m) => m.MsgId)).toEqual(['1001', '1002'])
    // One user, one second, two codes: two scans.
    for (const key of ['pc_a', 'pc_b', 'pc_a']) await callback({ method: 'POST', query: query(), body: event({ Event: 'SCAN', EventKey: key }) })
    expect(calls.map((c) => c.sceneStr)).toEqual(['pc_a', 'pc_b'])
  })

  it('callbacks on one store share the records: a delivery to another instance answers success and is not processed', async () => {
    const store = new MemoryStore()
    const a = setup({ store })
    const b = setup({ store })
    const body = a.event({ Event: 'SCAN', EventKey: 'pc_shared' })
    const q = a.query()
    expect(parseXml((await a.callback({ method: 'POST', query: q, body })).body).Content).toBe('Signed in.')
    // WeChat's retry of the same request, and a delivery of the same event under a new nonce.
    expect(await b.callback({ method: 'POST', query: q, body })).toMatchObject({ status: 200, body: 'success' })
    expect(await b.callback({ method: 'POST', query: b.query({}, b.clock.now() + 1000), body })).toMatchObject({ status: 200, body: 'success' })
    // A forged body on the used pair, and a verification with it.
    expect((await b.callback({ method: 'POST', query: q, body: b.event({ Event: 'SCAN', EventKey: 'pc_evil' }) })).status).toBe(403)
    expect((await b.callback({ method: 'GET', query: { ...q, echostr: 'x' } })).status).toBe(403)
    expect([...a.calls, ...b.calls]).toEqual([{ sceneStr: 'pc_shared', openid: 'o_user' }])
  })

  it('without a store each callback remembers only its own requests (one instance only)', async () => {
    const a = setup()
    const b = setup()
    const request = { method: 'POST', query: a.query(), body: a.event({ Event: 'SCAN', EventKey: 'pc_x' }) }
    await a.callback(request)
    await b.callback(request)
    expect(a.calls.length + b.calls.length).toBe(2)
  })

  it('accounts sharing a store keep their records apart', async () => {
    const store = new MemoryStore()
    const first = setup({ store })
    const second = setup({ store, appId: 'wx_other_account' })
    const request = { method: 'POST', query: signedQuery(first.clock.now(), '777'), body: first.event({ Event: 'SCAN', EventKey: 'pc_1' }) }
    expect((await first.callback(request)).status).toBe(200)
    expect((await second.callback(request)).status).toBe(200)
    expect(first.calls.length + second.calls.length).toBe(2)
  })
})

describe('the records in the store (B-wx-7)', () => {
  it('are written under wx: keys and live twice the window', async () => {
    const store = new MemoryStore()
    const { callback, clock, event } = setup({ store, replayWindowSeconds: 60 })
    const q = signedQuery(clock.now(), '4242')
    const body = event({ Event: 'SCAN', EventKey: 'pc_keys' })
    await callback({ method: 'POST', query: q, body })
    const keys = [
      `wx:req:${APP_ID}:${q.timestamp}:4242:${sha256(`POST\n${body}`)}`,
      `wx:nonce:${APP_ID}:${q.timestamp}:4242`,
      `wx:event:${APP_ID}:${sha256(JSON.stringify(['event', 'o_user', q.timestamp, 'SCAN', 'pc_keys']))}`,
    ]
    const now = clock.now()
    for (const key of keys) expect(await store.incrementCounter(key, now + 1, now)).toBe(2)
    const later = now + 120_000
    for (const key of keys) expect(await store.incrementCounter(key, later + 1, later)).toBe(1)
  })

  it('a duplicate within twice the window is skipped; after it, it counts as new', async () => {
    const { callback, clock, query, event, calls } = setup({ replayWindowSeconds: 60 })
    const body = event({ Event: 'SCAN', EventKey: 'pc_late' })
    await callback({ method: 'POST', query: query(), body })
    clock.advance(119_000)
    await callback({ method: 'POST', query: query(), body })
    expect(calls).toHaveLength(1)
    clock.advance(2_000)
    await callback({ method: 'POST', query: query(), body })
    expect(calls).toHaveLength(2)
  })
})

describe('failures (B-wx-8, B-wx-9)', () => {
  it("core's invalid_request is an invalid scan, answered and recorded", async () => {
    const { callback, query, event } = setup({}, async () => Promise.reject(Object.assign(new Error('openid too long'), { code: 'invalid_request' })))
    const res = await callback({ method: 'POST', query: query(), body: event({ Event: 'SCAN', EventKey: 's' }) })
    expect(parseXml(res.body).Content).toMatch(/expired or was already used/)
  })

  it('a failing handleScan is 500 and forgets the delivery: the identical retry and a new nonce both get a real second chance', async () => {
    let failures = 2
    const flaky = setup({}, async () => {
      if (failures-- > 0) throw new Error('store down')
      return { result: 'authorized', userId: 1 }
    })
    const body = flaky.event({ Event: 'SCAN', EventKey: 's' })
    const q = flaky.query()
    expect(await flaky.callback({ method: 'POST', query: q, body })).toMatchObject({ status: 500, body: 'internal error' })
    expect(await flaky.callback({ method: 'POST', query: q, body })).toMatchObject({ status: 500 })
    expect(parseXml((await flaky.callback({ method: 'POST', query: flaky.query(), body })).body).Content).toBe('Signed in.')
    expect(flaky.calls).toHaveLength(3)
    expect(flaky.errors.map((e) => [(e.error as Error).message, e.message?.EventKey])).toEqual([['store down', 's'], ['store down', 's']])
  })

  it('a repeat waiting for a first delivery that fails fails with it', async () => {
    const held = gate()
    const { callback, query, event, calls } = setup({}, async () => {
      await held.opened
      throw new Error('store down')
    })
    const request = { method: 'POST', query: query(), body: event({ Event: 'SCAN', EventKey: 's' }) }
    const pending = [callback(request), callback(request)]
    held.open()
    expect((await Promise.all(pending)).map((r) => r.status)).toEqual([500, 500])
    expect(calls).toHaveLength(1)
  })

  it('a failing onMessage or reply is reported and answered success: a retry would fail again', async () => {
    const { callback, query, event, clock, errors } = setup({ onMessage: () => Promise.reject(new Error('app bug')), reply: () => { throw new Error('reply bug') } })
    const text = buildXml({ ToUserName: ACCOUNT, FromUserName: 'o_u', CreateTime: Math.floor(clock.now() / 1000), MsgType: 'text', Content: 'hi', MsgId: '1' })
    expect((await callback({ method: 'POST', query: query(), body: text })).body).toBe('success')
    expect((await callback({ method: 'POST', query: query(), body: event({ Event: 'SCAN', EventKey: 's' }) })).body).toBe('success')
    expect(errors.map((e) => (e.error as Error).message)).toEqual(['app bug', 'reply bug'])
  })

  it('a store that fails is 500 and reported, for a push (with its message) and a verification (without)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'scanauth-wechat-'))
    const store = new SqliteStore({ filename: join(dir, 'db.sqlite') })
    await store.close()
    await rm(dir, { recursive: true, force: true })
    const { callback, query, event, calls, errors } = setup({ store })
    expect(await callback({ method: 'POST', query: query(), body: event({ Event: 'SCAN', EventKey: 'pc_down' }) })).toMatchObject({ status: 500, body: 'internal error' })
    expect(await callback({ method: 'GET', query: query({ echostr: 'e' }) })).toMatchObject({ status: 500, body: 'internal error' })
    expect(calls).toHaveLength(0)
    expect(errors.map((e) => e.message?.EventKey ?? null)).toEqual(['pc_down', null])
    // Refusals come before the store: they stay 4xx while it is down.
    expect((await callback({ method: 'POST', query: {}, body: '{}' })).status).toBe(401)
  })

  it('answers success before the deadline when core is slow; a retry after it finished gets the reply', async () => {
    const held = gate()
    const { callback, query, event, calls } = setup({ replyDeadlineMs: 20 }, async () => (await held.opened, { result: 'authorized', userId: 1 }))
    const body = event({ Event: 'SCAN', EventKey: 'pc_slow' })
    expect((await callback({ method: 'POST', query: query(), body })).body).toBe('success')
    held.open()
    await held.opened
    const retry = await callback({ method: 'POST', query: query(), body })
    expect(calls).toHaveLength(1)
    expect(parseXml(retry.body).Content).toBe('Signed in.')
  })
})

it('a custom store is used as given (only incrementCounter and deleteCounter)', async () => {
  const seen: string[] = []
  const backing = new MemoryStore()
  const store = {
    incrementCounter: (key: string, expiresAt: number, now: number) => (seen.push(key), backing.incrementCounter(key, expiresAt, now)),
    deleteCounter: (key: string) => backing.deleteCounter(key),
  }
  const callback = createWechatCallback({ auth: recordingAuth().auth, token: TOKEN, appId: APP_ID, store, now: () => 1_772_352_000_000 })
  await callback({ method: 'GET', query: { ...signedQuery(1_772_352_000_000, '9'), echostr: 'e' } })
  expect(seen.map((key) => key.split(':').slice(0, 2).join(':'))).toEqual(['wx:req', 'wx:nonce'])
})
