/**
 * RedisStore on a real three-master Redis Cluster, started on free loopback ports (7101 and up)
 * before the tests and shut down after them: the whole Store contract suite, then what is
 * particular to a Cluster (one slot per prefix, scripts reaching keys they build themselves,
 * NOSCRIPT on the slot's master, prefixes with different tags on different masters, counters,
 * orders and the confirm-ticket index in the prefix's slot, change notification through another client and another process).
 */
import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Cluster } from 'ioredis'
import { createScanAuth } from '@scanauth/core'
import { checkInvariants, describeStoreContract, eventually, ManualClock, RecordingQrProvider, within } from '@scanauth/testkit'
import { RedisStore } from '../src/index'
import { startCluster, type TestCluster } from './support/cluster'
import { deleteKeysUnder, dumpRecords, keysUnder, redisHarness, testPrefix } from './support/redis'
import { startWorkerProcess } from './support/worker-process'

let cluster: TestCluster

beforeAll(async () => {
  cluster = await startCluster()
}, 60_000)

afterAll(async () => {
  await cluster?.stop()
})

describeStoreContract('RedisStore on a Redis Cluster', redisHarness(() => cluster.connect()))

describe('RedisStore on a Redis Cluster', () => {
  async function withStore<T>(prefix: string, body: (store: RedisStore, client: Cluster) => Promise<T>): Promise<T> {
    const client = cluster.connect()
    try {
      return await body(new RedisStore({ client, keyPrefix: prefix }), client)
    } finally {
      await deleteKeysUnder(client, prefix)
      await client.quit()
    }
  }

  /** Runs a small but complete flow: scenes, a scan, a keyed grant, consumption, a poll, the ledger, a sign-out. */
  async function flow(store: RedisStore) {
    const clock = new ManualClock()
    const auth = createScanAuth({ store, qr: new RecordingQrProvider(), now: clock.now })
    const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
    const scan = await auth.handleScan({ sceneStr, openid: 'alice' })
    await auth.grant({ openid: 'alice', type: 'points', points: 2, idempotencyKey: 'pay-1' })
    clock.advance(8 * 24 * 3600_000)
    const second = await auth.createScene({ deviceId: 'tv' })
    await auth.handleScan({ sceneStr: second.sceneStr, openid: 'alice' })
    const status = await auth.getStatus(second.sceneStr)
    if (status.status !== 'authorized') throw new Error(`unexpected ${status.status}`)
    const used = await auth.consume({ sessionToken: status.sessionToken, idempotencyKey: 'tap-1' })
    const ledger = await auth.listLedger({ openid: 'alice' })
    const signedOut = await auth.revokeSessions({ openid: 'alice' })
    return { scan, used, ledger, signedOut }
  }

  it('keeps every key of a store in the prefix slot, on one master', async () => {
    const prefix = testPrefix()
    await withStore(prefix, async (store, client) => {
      const { scan, used, ledger, signedOut } = await flow(store)
      expect(scan).toEqual({ result: 'authorized', userId: 1 })
      expect(used).toMatchObject({ status: 'ok', authorization: { type: 'points', remainingPoints: 1 } })
      expect(ledger.entries.map((e) => e.kind)).toEqual(['grant', 'activate', 'grant', 'expire', 'activate', 'consume'])
      expect(signedOut).toBe(1)
      const keys = await keysUnder(client, prefix)
      const kinds = new Set(keys.map((k) => k.slice(prefix.length).split(':')[0]))
      // Every kind of key but the session index `us:`, emptied by the sign-out (so Redis removed it),
      // and `ae`, emptied when the trial expired; `c:` holds the counters of createScene's rate
      // limits, `ap` the active points authorization for the reminders' read.
      expect([...kinds].sort()).toEqual(['a', 'aa', 'ap', 'c', 'i', 'l', 'ls', 'o', 'r', 's', 'seq', 't', 'u'])
      const slots = new Set(await Promise.all(keys.map((k) => client.cluster('KEYSLOT', k))))
      expect(slots.size).toBe(1)
      const holders = await Promise.all(client.nodes('master').map(async (node) => (await keysUnder(node, prefix)).length))
      expect(holders.filter((n) => n > 0)).toEqual([keys.length])
      expect(checkInvariants(await dumpRecords(client, prefix))).toEqual([])
    })
  })

  it('keeps counters in the prefix slot, braces in their keys notwithstanding, and counts atomically from two clients', async () => {
    const prefix = testPrefix()
    const other = cluster.connect()
    try {
      await withStore(prefix, async (store, client) => {
        const peer = new RedisStore({ client: other, keyPrefix: prefix })
        const now = Date.parse('2026-01-01T00:00:00.000Z')
        const key = 'wx:event:{not-the-tag}:😀'
        const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? store : peer).incrementCounter(key, now + 60_000, now)))
        expect([...answers].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1))
        const [seqSlot, counterSlot] = await Promise.all([store.keys.seq, store.keys.counter(key)].map((k) => client.cluster('KEYSLOT', k)))
        expect(counterSlot).toBe(seqSlot)
        await peer.deleteCounter(key)
        expect(await store.incrementCounter(key, now + 60_000, now)).toBe(1)
      })
    } finally {
      await other.quit()
    }
  })

  it('keeps orders and their indexes in the prefix slot, braces in outTradeNo and scene_str notwithstanding', async () => {
    const prefix = testPrefix()
    const other = cluster.connect()
    try {
      await withStore(prefix, async (store, client) => {
        const peer = new RedisStore({ client: other, keyPrefix: prefix })
        const at = Date.parse('2026-01-01T00:00:00.000Z')
        const base = {
          userId: 5, planId: 'month', description: '月卡', amountFen: 1500, grant: { type: 'time' as const, days: 30 },
          channel: 'jsapi' as const, status: 'open' as const, createdAt: at, expiresAt: at + 900_000, updatedAt: at, paidAt: null,
          transactionId: null, authorizationId: null, refundedFen: 0, refunds: [], version: 1,
        }
        const first = { ...base, outTradeNo: 'SA{other-tag}1', sceneStr: '{not-the-tag}:😀' }
        const second = { ...base, outTradeNo: 'SA{x}2', sceneStr: null, createdAt: at + 1 }
        expect(await store.saveOrder({ op: 'insert', order: first })).toBe(true)
        expect(await peer.saveOrder({ op: 'insert', order: second })).toBe(true)
        expect(await peer.listOpenOrders({ userId: 5, limit: 10 })).toStrictEqual([first, second])
        expect(await store.listOpenOrders({ sceneStr: first.sceneStr, limit: 10 })).toStrictEqual([first])
        // Racing updates from two clients: one wins, and the indexes follow it.
        const answers = await Promise.all([store, peer].map((s) => s.saveOrder({ op: 'update', order: { ...first, status: 'paid', version: 2 }, expectedVersion: 1 })))
        expect(answers.filter(Boolean)).toHaveLength(1)
        expect(await store.listOpenOrders({ limit: 10 })).toStrictEqual([second])
        const keys = await keysUnder(client, prefix)
        // Besides the receipts of the writes (`r:`, in the slot too):
        const names = keys.map((k) => k.slice(prefix.length)).filter((k) => !k.startsWith('r:'))
        expect(names.sort()).toEqual(['oa', 'oas:open', 'oas:paid', 'oau:5', 'od:SA{other-tag}1', 'od:SA{x}2', 'oo', 'ou:5'])
        // The operator's listing of every order, on the Cluster as anywhere.
        expect(await peer.listOrders({ userId: 5, limit: 10 })).toStrictEqual([{ ...first, status: 'paid', version: 2 }, second])
        const slots = new Set(await Promise.all([store.keys.seq, ...keys].map((k) => client.cluster('KEYSLOT', k))))
        expect(slots.size).toBe(1)
        expect((await dumpRecords(client, prefix)).orders).toStrictEqual([{ ...first, status: 'paid', version: 2 }, second])
        // Closed, it goes into the closed-order index, in the slot too; a purge past its deadline deletes it there.
        expect(await peer.saveOrder({ op: 'update', order: { ...second, status: 'closed', version: 2 }, expectedVersion: 1 })).toBe(true)
        expect(await client.cluster('KEYSLOT', store.keys.closedOrders)).toBe(await client.cluster('KEYSLOT', store.keys.seq))
        expect(await client.zcard(store.keys.closedOrders)).toBe(1)
        expect(await store.purgeExpired({ now: at + 900_000 })).toMatchObject({ orders: 1, more: false })
        expect((await dumpRecords(client, prefix)).orders).toStrictEqual([{ ...first, status: 'paid', version: 2 }])
        expect(await store.listOrders({ limit: 10 })).toStrictEqual([{ ...first, status: 'paid', version: 2 }])
      })
    } finally {
      await other.quit()
    }
  })

  it("keeps the confirm-ticket index in the prefix slot and finds a scene by its ticket from another client (confirm: 'link')", async () => {
    const prefix = testPrefix()
    const other = cluster.connect()
    try {
      await withStore(prefix, async (store, client) => {
        const clock = new ManualClock()
        const auth = createScanAuth({ store, qr: new RecordingQrProvider(), now: clock.now, confirm: 'link', confirmation: { url: 'https://example.test/auth/confirm' } })
        const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
        const scan = await auth.handleScan({ sceneStr, openid: 'alice' })
        if (scan.result !== 'scanned') throw new Error(`unexpected scan result ${scan.result}`)
        const ticketHash = createHash('sha256').update(scan.ticket).digest('base64url')
        const peer = new RedisStore({ client: other, keyPrefix: prefix })
        expect((await peer.load({ confirmTicketHash: ticketHash })).scene).toMatchObject({ sceneStr, status: 'scanned', confirmation: { scannedBy: 'alice' } })
        expect((await peer.load({ confirmTicketHash: 'unknown' })).scene).toBeNull()
        // Braces in a digest (none in base64url, but the key does not rely on it) cannot move the
        // index out of the slot: Redis hashes the first tag, the prefix's.
        const names = [store.keys.seq, store.keys.confirmTicket(ticketHash), store.keys.confirmTicket('{other}')]
        const slots = await Promise.all(names.map((k) => client.cluster('KEYSLOT', k)))
        expect(new Set(slots).size).toBe(1)
        expect(await client.pexpiretime(store.keys.confirmTicket(ticketHash))).toBe(await client.pexpiretime(store.keys.scene(sceneStr)))
      })
    } finally {
      await other.quit()
    }
  })

  it('survives SCRIPT FLUSH on every master', async () => {
    await withStore(testPrefix(), async (store, client) => {
      await flow(store)
      await Promise.all(client.nodes('master').map((node) => node.script('FLUSH')))
      const clock = new ManualClock()
      const auth = createScanAuth({ store, qr: new RecordingQrProvider(), now: clock.now })
      const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
      expect(await auth.handleScan({ sceneStr, openid: 'bob' })).toEqual({ result: 'authorized', userId: 2 })
    })
  })

  it('places prefixes with different hash tags on different masters (sharding by prefix)', async () => {
    const probe = cluster.connect()
    try {
      // Find two tags whose slots belong to different masters.
      const owners = new Map<string, string>()
      const slots = await probe.cluster('SLOTS')
      for (let i = 0; owners.size < 2 && i < 100; i++) {
        const slot = (await probe.cluster('KEYSLOT', `{tenant-${i}}`)) as number
        const owner = slots.find(([from, to]) => slot >= from && slot <= to)?.[2]?.[1]
        if (owner !== undefined && ![...owners.values()].includes(String(owner))) owners.set(`tenant-${i}`, String(owner))
      }
      expect(owners.size).toBe(2)
      const prefixes = [...owners.keys()].map((tag) => `scanauth:test:${testPrefix().split(':')[2]}:{${tag}}:`)
      const results = await Promise.all(prefixes.map((prefix) => withStore(prefix, async (store) => (await flow(store)).scan)))
      expect(results).toEqual([
        { result: 'authorized', userId: 1 },
        { result: 'authorized', userId: 1 },
      ])
    } finally {
      await probe.quit()
    }
  })
})

describe('change notification on a Redis Cluster', () => {
  /** Connections named `name` on every master, and subscribers of `channel` over all of them (NUMSUB is per node). */
  async function census(probe: Cluster, name: string, channel: string): Promise<{ connections: number; subscribers: number }> {
    let connections = 0
    let subscribers = 0
    for (const node of probe.nodes('master')) {
      const list = (await node.client('LIST')) as string
      connections += list.split('\n').filter((line) => line.includes(name)).length
      const [, count] = (await node.pubsub('NUMSUB', channel)) as [string, number]
      subscribers += count
    }
    return { connections, subscribers }
  }

  it('tells a listener of commits through another client and from another process, and wakes waitForStatus', { timeout: 60_000 }, async () => {
    const prefix = testPrefix()
    const name = `scanauth-watch-${prefix.split(':')[2]}`
    const client = cluster.connect({ redisOptions: { connectionName: name } })
    const other = cluster.connect()
    const store = new RedisStore({ client, keyPrefix: prefix })
    const auth = createScanAuth({ store, qr: new RecordingQrProvider() })
    const otherAuth = createScanAuth({ store: new RedisStore({ client: other, keyPrefix: prefix }), qr: new RecordingQrProvider() })
    const worker = await startWorkerProcess(prefix, cluster.ports)
    try {
      await auth.createScene({ deviceId: 'warm-up' })
      const before = await census(other, name, store.keys.sceneChannel)
      expect(before.subscribers).toBe(0)

      // Another client (its own connections) scans: the commit script's PUBLISH crosses the cluster bus.
      const heard: string[] = []
      const stop = store.watchScenes((s) => heard.push(s))
      // Registered, then a read through the store (as a wait does): it answers once SUBSCRIBE is in place.
      await store.load({ sceneStr: 'pc_none' })
      const first = await otherAuth.createScene({ deviceId: 'tv' })
      await otherAuth.handleScan({ sceneStr: first.sceneStr, openid: 'alice' })
      await eventually('the creation and the scan', () => heard.filter((s) => s === first.sceneStr).length === 2)
      expect((await census(other, name, store.keys.sceneChannel)).subscribers).toBe(1)
      stop()
      await eventually('the subscriber connection to close', async () => {
        const now = await census(other, name, store.keys.sceneChannel)
        return now.subscribers === 0 && now.connections === before.connections
      })

      // Another process scans; a wait here, far longer than the test, ends with it.
      const second = await auth.createScene({ deviceId: 'tv' })
      const waiting = auth.waitForStatus(second.sceneStr, { timeoutMs: 600_000 })
      await eventually('the wait to subscribe', () => store.watching)
      const report = await worker.run({ phase: 'scan', scenes: [second.sceneStr], openidFor: ['bob'] })
      expect(report.outcomes).toEqual({ authorized: 1 })
      expect(await within(waiting, 'the wait to end')).toMatchObject({ status: 'authorized', sessionToken: expect.any(String) })
      expect(store.watching).toBe(false)
      await eventually('no subscriber left', async () => (await census(other, name, store.keys.sceneChannel)).subscribers === 0)
    } finally {
      await worker.exit()
      await store.close()
      await deleteKeysUnder(other, prefix)
      await Promise.all([client.quit(), other.quit()])
    }
  })
})
