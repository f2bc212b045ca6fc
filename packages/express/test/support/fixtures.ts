/**
 * What the Express and Koa tests build on (Koa's import this file): a service on a MemoryStore, a
 * real store that fails, and the real WeChat callback with what WeChat would send it.
 */
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createScanAuth, MemoryStore, type ScanAuth, type Store } from '@scanauth/core'
import { SqliteStore } from '@scanauth/sqlite'
import { RecordingQrProvider } from '@scanauth/testkit'
import { computeSignature, createWechatCallback } from '@scanauth/wechat'

/** A service on a fresh MemoryStore; QR codes are `https://qr.example.test/<scene>`. */
export function memoryAuth(): ScanAuth {
  return createScanAuth({ store: new MemoryStore(), qr: new RecordingQrProvider() })
}

/** A real store that fails every call: a SqliteStore whose database has been closed (its file removed). */
export async function closedSqliteStore(): Promise<Store> {
  const dir = await mkdtemp(join(tmpdir(), 'scanauth-middleware-'))
  const store = new SqliteStore({ filename: join(dir, 'db.sqlite') })
  await store.close()
  await rm(dir, { recursive: true, force: true })
  return store
}

/** The Official Account the callback tests sign for (plain mode). */
const CALLBACK_ACCOUNT = { token: 'test-token', appId: 'wx0000test0000app' }

/**
 * The real WeChat callback over a real service, and what WeChat would send it: a signed plain-mode
 * `SCAN` push for a fresh pending scene, and a signed URL verification. A middleware that hands the
 * callback the raw body intact gets `success` and leaves the scene authorized.
 */
export async function realCallback() {
  const auth = memoryAuth()
  const callback = createWechatCallback({ auth, ...CALLBACK_ACCOUNT, reply: false })
  const sceneStr = (await auth.createScene({ deviceId: 'tv' })).sceneStr
  const timestamp = String(Math.floor(Date.now() / 1000))
  const signed = (nonce: string) => `signature=${computeSignature(CALLBACK_ACCOUNT.token, timestamp, nonce)}&timestamp=${timestamp}&nonce=${nonce}`
  const xml =
    `<xml><ToUserName><![CDATA[gh_test]]></ToUserName><FromUserName><![CDATA[openid-cb]]></FromUserName>` +
    `<CreateTime>${timestamp}</CreateTime><MsgType><![CDATA[event]]></MsgType><Event><![CDATA[SCAN]]></Event>` +
    `<EventKey><![CDATA[${sceneStr}]]></EventKey></xml>`
  return {
    callback,
    xml,
    /** A fresh signed query string for a push (each push needs its own nonce). */
    pushQuery: () => signed(randomBytes(6).toString('hex')),
    verifyQuery: `${signed('v1')}&echostr=echo-42`,
    /** Whether the scene was processed (the push reached core with its body intact). */
    scanned: async () => (await auth.getStatus(sceneStr)).status === 'authorized',
  }
}
