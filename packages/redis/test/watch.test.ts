/**
 * Change notification on one Redis server (Store.watchScenes, docs/behaviour.md B-wait-1 and
 * B-wait-4; docs/redis.md, "Waiting for a scan"): the commit script's PUBLISH heard through
 * another client and from another process, the one subscriber connection and its lifetime (seen
 * from the server: CLIENT LIST by the client's name, PUBSUB NUMSUB), subscribing again after the
 * connection is killed, and the round trips of the hot paths while someone waits. The same on a
 * Cluster: cluster.test.ts.
 */
import { randomBytes } from 'node:crypto'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { createScanAuth, type ScanAuth } from '@scanauth/core'
import { RedisStore } from '../src/index'
import { countCommands, deleteKeysUnder, REDIS_URL, testPrefix } from './support/redis'
import { eventually, RecordingQrProvider, told, within } from '@scanauth/testkit'
import { startWorkerProcess } from './support/worker-process'

let name: string
let client: Redis
let admin: Redis
let prefix: string
let store: RedisStore
let auth: ScanAuth
const cleanups: Array<() => Promise<unknown>> = []

beforeEach(() => {
  // A name of its own, which the store's duplicate inherits: the server's CLIENT LIST tells them apart.
  name = `scanauth-watch-${randomBytes(4).toString('hex')}`
  client = new Redis(REDIS_URL, { connectionName: name })
  admin = new Redis(REDIS_URL)
  prefix = testPrefix()
  store = new RedisStore({ client, keyPrefix: prefix })
  auth = createScanAuth({ store, qr: new RecordingQrProvider() })
})

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  await store.close()
  await deleteKeysUnder(admin, prefix)
  await Promise.all([client.quit(), admin.quit()])
})

/** Connections the server has under the test client's name (the client itself, plus the store's subscriber). */
async function connectionsNamed(): Promise<number> {
  const list = (await admin.client('LIST')) as string
  return list.split('\n').filter((line) => line.includes(` name=${name} `)).length
}

/** Subscribers of the store's channel on the server. */
async function subscribers(): Promise<number> {
  const [, count] = (await admin.pubsub('NUMSUB', store.keys.sceneChannel)) as [string, number]
  return count
}

/** A store and a service on the same prefix over a client of their own. */
function peer(): { client: Redis; store: RedisStore; auth: ScanAuth } {
  const other = new Redis(REDIS_URL)
  cleanups.push(() => other.quit())
  const peerStore = new RedisStore({ client: other, keyPrefix: prefix })
  return { client: other, store: peerStore, auth: createScanAuth({ store: peerStore, qr: new RecordingQrProvider() }) }
}

describe('watchScenes on one Redis server', () => {
  it('tells a listener of commits through this store and through another RedisStore on another client', async () => {
    const other = peer()
    const heard: string[] = []
    const stop = store.watchScenes((s) => heard.push(s))
    try {
      const own = await auth.createScene({ deviceId: 'tv' })
      await told(heard, own.sceneStr)
      const theirs = await other.auth.createScene({ deviceId: 'tv' })
      await told(heard, theirs.sceneStr)
      heard.length = 0
      await other.auth.handleScan({ sceneStr: theirs.sceneStr, openid: 'alice' })
      await told(heard, theirs.sceneStr)
      // A poll writes nothing, and so publishes nothing: messages arrive in the order they were
      // published, so once the next scene write is heard, anything the poll published would be too.
      await other.auth.getStatus(theirs.sceneStr)
      const next = await other.auth.createScene({ deviceId: 'tv' })
      await told(heard, next.sceneStr)
      expect(heard).toEqual([theirs.sceneStr, next.sceneStr])
    } finally {
      stop()
    }
  })

  it('tells of a scan committed by another process, and wakes waitForStatus with it', { timeout: 60_000 }, async () => {
    const worker = await startWorkerProcess(prefix)
    cleanups.push(() => worker.exit())
    const first = await auth.createScene({ deviceId: 'tv' })
    const heard: string[] = []
    const stop = store.watchScenes((s) => heard.push(s))
    try {
      // A load waits for the subscription being set up: once it answers, a publish reaches us.
      await store.load({ sceneStr: first.sceneStr })
      const report = await worker.run({ phase: 'scan', scenes: [first.sceneStr], openidFor: ['alice'] })
      expect(report.outcomes).toEqual({ authorized: 1 })
      await told(heard, first.sceneStr)
    } finally {
      stop()
    }

    const second = await auth.createScene({ deviceId: 'tv' })
    // A wait far longer than the test: only the notification can end it in time.
    const waiting = auth.waitForStatus(second.sceneStr, { timeoutMs: 600_000 })
    await eventually('the wait to subscribe', () => store.watching)
    await worker.run({ phase: 'scan', scenes: [second.sceneStr], openidFor: ['bob'] })
    expect(await within(waiting, 'the wait to end')).toMatchObject({ status: 'authorized', sessionToken: expect.any(String) })
    // The wait is over: nobody listens, so the store has let its connection go (B-wait-4).
    expect(store.watching).toBe(false)
  })

  it('holds one subscriber connection however many listen, and none once the last leaves or after close()', async () => {
    await client.ping()
    expect(await connectionsNamed()).toBe(1)
    const stops = [store.watchScenes(() => undefined), store.watchScenes(() => undefined), store.watchScenes(() => undefined)]
    await store.load({ sceneStr: 'pc_none' }) // the subscription is in place once this answers
    expect(await subscribers()).toBe(1)
    expect(await connectionsNamed()).toBe(2)
    stops[0]?.()
    stops[1]?.()
    expect(store.watching).toBe(true)
    stops[2]?.()
    stops[2]?.() // a second call changes nothing
    expect(store.watching).toBe(false)
    await eventually('the subscriber connection to close', async () => (await subscribers()) === 0 && (await connectionsNamed()) === 1)

    // Again, and this time close() lets it go (the application's client stays open).
    store.watchScenes(() => undefined)
    await store.load({ sceneStr: 'pc_none' })
    expect(await subscribers()).toBe(1)
    await store.close()
    expect(store.watching).toBe(false)
    await eventually('the subscriber connection to close', async () => (await subscribers()) === 0 && (await connectionsNamed()) === 1)
    expect(client.status).toBe('ready')
  })

  it('subscribes again after its connection is killed, and hears the scans after that', async () => {
    const other = peer()
    const heard: string[] = []
    const stop = store.watchScenes((s) => heard.push(s))
    try {
      await store.load({ sceneStr: 'pc_none' })
      // The subscriber: the connection under the test client's name that is in subscriber mode.
      const list = (await admin.client('LIST')) as string
      const line = list.split('\n').find((l) => l.includes(` name=${name} `) && / sub=1 /.test(l))
      const id = /\bid=(\d+)/.exec(line ?? '')?.[1]
      expect(id).toBeDefined()
      await admin.client('KILL', 'ID', id as string)
      // ioredis reconnects and subscribes again (a scan committed in between would be lost, and
      // the waits that missed it end at their timeout with a fresh read).
      await eventually('a new subscription', async () => {
        const now = (await admin.client('LIST')) as string
        return now.split('\n').some((l) => l.includes(` name=${name} `) && / sub=1 /.test(l) && !l.includes(` id=${id} `))
      })
      const { sceneStr } = await other.auth.createScene({ deviceId: 'tv' })
      await told(heard, sceneStr)
    } finally {
      stop()
    }
  })

  it('makes a load wait for a subscription being set up, so that nothing committed after it is missed', async () => {
    const stop = store.watchScenes(() => undefined)
    try {
      // Started in the same tick as the subscription: when it answers, SUBSCRIBE has been confirmed.
      await store.load({ sceneStr: 'pc_none' })
      expect(await subscribers()).toBe(1)
    } finally {
      stop()
    }
  })

  it('keeps the hot paths: a pending poll is one GET and a scan two script calls, while a wait is subscribed', async () => {
    const warm = await auth.createScene({ deviceId: 'warm-up' })
    await auth.handleScan({ sceneStr: warm.sceneStr, openid: 'warm' }) // scripts cached on the server
    const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
    const waiting = auth.waitForStatus(sceneStr, { timeoutMs: 600_000 })
    await eventually('the wait to subscribe', () => store.watching)
    await store.load({ sceneStr: 'pc_none' }) // past the subscription's setting up
    // The application's client only: the subscriber is a connection of its own.
    const counter = countCommands(client)
    expect(await auth.getStatus(sceneStr)).toEqual({ status: 'pending' })
    expect(counter.byName()).toEqual({ get: 1 })
    // A commit is still one script call: the PUBLISH is inside it.
    const scanner = peer()
    await scanner.client.ping() // connected: the handshake's commands are not the scan's
    const scanCounter = countCommands(scanner.client)
    await scanner.auth.handleScan({ sceneStr, openid: 'alice' })
    expect(scanCounter.byName()).toEqual({ evalsha: 2 })
    expect(await within(waiting, 'the wait to end')).toMatchObject({ status: 'authorized' })
  })
})
