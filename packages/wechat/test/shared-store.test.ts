// Two callback instances (each its own service, store object and HTTP server on 127.0.0.1) over one
// SQLite file and over one Redis prefix: the replay and duplicate records of one instance hold on
// the other (docs/behaviour.md B-wx-4 … B-wx-7). Redis at REDIS_URL (default redis://127.0.0.1:6379)
// under a prefix of this test's own, deleted afterwards.
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createScanAuth, type QrProvider, type ScanEvent, type Store } from '@scanauth/core'
import { RedisStore } from '@scanauth/redis'
import { SqliteStore } from '@scanauth/sqlite'
import { Redis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import { buildXml, computeSignature, createWechatCallback, parseXml } from '../src/index'
import { closer, serveCallback } from './helpers'

const ACCOUNT = { token: 'sharedToken', appId: 'wx_shared_0000001' }
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const resources = closer()
afterEach(() => resources.closeAll())

/** Codes the services hand out: a URL per scene (the WeChat client itself is tested against the emulator). */
const qr: QrProvider = { createQr: async ({ sceneStr }) => ({ url: `https://qr.example.test/${sceneStr}` }) }

/** Two store objects over the same backing data, closed (and the data removed) after the test. */
type Backend = () => Promise<[Store, Store]>

const sqlite: Backend = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'scanauth-wechat-shared-'))
  resources.add({ close: () => rm(dir, { recursive: true, force: true }) })
  const filename = join(dir, 'db.sqlite')
  return [resources.add(new SqliteStore({ filename })), resources.add(new SqliteStore({ filename }))]
}

const redis: Backend = async () => {
  const keyPrefix = `scanauth:test:wechat:${randomBytes(6).toString('hex')}:{w}:`
  const clients = [new Redis(REDIS_URL), new Redis(REDIS_URL)] as const
  resources.add({
    async close() {
      // Only this test's keys (SCAN, never KEYS or FLUSHDB: the server is shared).
      let cursor = '0'
      do {
        const [next, keys] = await clients[0].scan(cursor, 'MATCH', `${keyPrefix}*`, 'COUNT', 1000)
        if (keys.length > 0) await clients[0].del(...keys)
        cursor = next
      } while (cursor !== '0')
      await Promise.all(clients.map((client) => client.quit()))
    },
  })
  return [new RedisStore({ client: clients[0], keyPrefix }), new RedisStore({ client: clients[1], keyPrefix })]
}

/** One application instance: a service on `store`, the callback on the same store, served over HTTP. */
async function instance(store: Store, scans: ScanEvent[]) {
  const auth = createScanAuth({ store, qr, hooks: { onScan: (event) => void scans.push(event) } })
  const callback = createWechatCallback({ auth, store, ...ACCOUNT, reply: (result) => `result: ${result.result}` })
  const server = resources.add(await serveCallback(callback))
  return { auth, url: server.url }
}

/** A query signed with the account's token, with `nonce`, for `timestamp` (default now, in seconds). */
function signed(nonce: string, extra: Record<string, string> = {}, timestamp = String(Math.floor(Date.now() / 1000))): string {
  return new URLSearchParams({ signature: computeSignature(ACCOUNT.token, timestamp, nonce), timestamp, nonce, ...extra }).toString()
}

/** The plain-mode push of a scan of `sceneStr` by `openid`. */
function scanXml(sceneStr: string, openid: string): string {
  return buildXml({ ToUserName: 'gh_shared', FromUserName: openid, CreateTime: Math.floor(Date.now() / 1000), MsgType: 'event', Event: 'SCAN', EventKey: sceneStr })
}

const post = async (url: string, query: string, body: string) => {
  const res = await fetch(`${url}?${query}`, { method: 'POST', headers: { 'content-type': 'text/xml' }, body })
  return { status: res.status, body: await res.text() }
}

describe.each([
  ['one SQLite file', sqlite],
  ['one Redis prefix', redis],
] as const)('two instances on %s', (_name, backend) => {
  async function world() {
    const [storeA, storeB] = await backend()
    const scans: ScanEvent[] = []
    const a = await instance(storeA, scans)
    const b = await instance(storeB, scans)
    return { a, b, scans }
  }

  it('a query signed for the URL verification on A, replayed to B with a forged body, is refused 403', async () => {
    const { a, b, scans } = await world()
    const { sceneStr } = await a.auth.createScene({ deviceId: 'tv-victim' })
    const nonce = String(Date.now())
    const timestamp = String(Math.floor(Date.now() / 1000))
    const verification = await fetch(`${a.url}?${signed(nonce, { echostr: 'echo-1' }, timestamp)}`)
    expect([verification.status, await verification.text()]).toEqual([200, 'echo-1'])
    // Whoever saw that URL (an access log) tries it as a scan by their own openid, on the other instance.
    expect(await post(b.url, signed(nonce, {}, timestamp), scanXml(sceneStr, 'o_attacker'))).toMatchObject({ status: 403 })
    expect(await post(b.url, signed(nonce, { echostr: 'echo-1' }, timestamp), scanXml(sceneStr, 'o_attacker'))).toMatchObject({ status: 403 })
    expect(scans).toHaveLength(0)
    expect(await b.auth.getStatus(sceneStr)).toEqual({ status: 'pending' })
  })

  it('a signed push used on A cannot carry another body on B', async () => {
    const { a, b, scans } = await world()
    const genuine = await a.auth.createScene({ deviceId: 'tv-1' })
    const other = await a.auth.createScene({ deviceId: 'tv-2' })
    const query = signed(`${Date.now()}1`)
    expect(await post(a.url, query, scanXml(genuine.sceneStr, 'o_alice'))).toMatchObject({ status: 200 })
    expect(await post(b.url, query, scanXml(other.sceneStr, 'o_mallory'))).toMatchObject({ status: 403 })
    expect(scans.map((s) => [s.sceneStr, s.openid])).toEqual([[genuine.sceneStr, 'o_alice']])
    expect((await b.auth.getStatus(other.sceneStr)).status).toBe('pending')
  })

  it("WeChat's retry of one event, delivered to A and then to B, reaches handleScan once", async () => {
    const { a, b, scans } = await world()
    const { sceneStr } = await a.auth.createScene({ deviceId: 'tv' })
    const body = scanXml(sceneStr, 'o_alice')
    const query = signed(`${Date.now()}2`)
    const first = await post(a.url, query, body)
    expect(parseXml(first.body).Content).toBe('result: authorized')
    // The same request again (WeChat resends it as it was), and the event under a new nonce.
    expect(await post(b.url, query, body)).toEqual({ status: 200, body: 'success' })
    expect(await post(b.url, signed(`${Date.now()}3`), body)).toEqual({ status: 200, body: 'success' })
    expect(scans.map((s) => s.result)).toEqual(['authorized'])
    expect((await b.auth.getStatus(sceneStr)).status).toBe('authorized')
  })

  it('one event delivered to A and B at the same moment is processed once', async () => {
    const { a, b, scans } = await world()
    for (let round = 0; round < 5; round++) {
      const { sceneStr } = await a.auth.createScene({ deviceId: `tv-${round}` })
      const body = scanXml(sceneStr, `o_user_${round}`)
      const query = signed(`${Date.now()}${round}4`)
      const answers = await Promise.all([post(a.url, query, body), post(b.url, query, body), post(b.url, signed(`${Date.now()}${round}5`), body)])
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200])
    }
    // Each scene was handled once: no second processing answered `invalid`.
    expect(scans.map((s) => s.result)).toEqual(Array(5).fill('authorized'))
  })
})
