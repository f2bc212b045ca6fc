/**
 * Faults: the store's connections are killed (`CLIENT KILL` from another client) while operations
 * run, and replies are lost after Redis executed a commit (or an order write). Every operation either succeeds or
 * fails with an error, nothing is ever half-applied or applied twice, and once ioredis has
 * reconnected the store works again, also after a `SCRIPT FLUSH`.
 *
 * Two kinds of client are attacked: one with ioredis defaults (commands in flight are re-sent
 * after the reconnect: operations succeed), and a strict one (`maxRetriesPerRequest: 0`: commands
 * in flight fail, whether or not Redis executed them).
 */
import { randomBytes } from 'node:crypto'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Redis, type RedisOptions } from 'ioredis'
import { createScanAuth, type ScanAuth } from '@scanauth/core'
import { checkInvariants, halfAppliedWrites, ManualClock, RecordingQrProvider } from '@scanauth/testkit'
import { RedisStore } from '../src/index'
import { COMMIT_SCRIPT } from '../src/scripts/commit'
import { LOAD_SCRIPT } from '../src/scripts/load'
import { SAVE_ORDER_SCRIPT } from '../src/scripts/save-order'
import { LuaScript } from '../src/scripts/lua-script'
import { connect, deleteKeysUnder, dumpRecords, REDIS_URL, testPrefix } from './support/redis'
import { startProxy } from './support/proxy'

const T0 = Date.parse('2026-01-01T00:00:00.000Z')

let admin: Redis
let prefix: string
let clock: ManualClock
const opened: Redis[] = []

beforeEach(() => {
  admin = connect()
  prefix = testPrefix()
  clock = new ManualClock(T0)
})

afterEach(async () => {
  await deleteKeysUnder(admin, prefix)
  await Promise.all([admin, ...opened.splice(0)].map((c) => c.quit().catch(() => c.disconnect())))
})

/** A client with a connection name of its own (so it can be found and killed), and a scanauth over it. */
function victim(name: string, options: RedisOptions = {}) {
  const connectionName = `scanauth-fault-${name}-${randomBytes(4).toString('hex')}`
  const client = new Redis(REDIS_URL, { connectionName, ...options })
  client.on('error', () => {}) // connection errors are the point here; operations report their own
  opened.push(client)
  const auth = createScanAuth({ store: new RedisStore({ client, keyPrefix: prefix }), qr: new RecordingQrProvider(), now: clock.now })
  return { client, auth, connectionName }
}

/** Kills, by id, every connection whose name is in `names`; returns how many it killed. */
async function kill(names: string[]): Promise<number> {
  const list = (await admin.client('LIST')) as string
  const ids = list
    .split('\n')
    .filter((line) => names.some((n) => line.includes(` name=${n} `)))
    .map((line) => /\bid=(\d+)/.exec(line)?.[1])
    .filter((id): id is string => id !== undefined)
  for (const id of ids) await admin.client('KILL', 'ID', id).catch(() => 0)
  return ids.length
}

/** Until `done()`, kills the named connections again and again, a few milliseconds apart. */
async function killLoop(names: string[], done: () => boolean): Promise<number> {
  let kills = 0
  while (!done()) {
    kills += await kill(names)
    await new Promise((resolve) => setTimeout(resolve, 2 + Math.random() * 6))
  }
  return kills
}

/** Retries `op` until it succeeds (the strict client fails while it reconnects). */
async function eventually<T>(op: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await op()
    } catch (error) {
      if (attempt > 200) throw error
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  }
}

async function sessionFor(auth: ScanAuth, openid: string): Promise<string> {
  const { sceneStr } = await auth.createScene({ deviceId: 'dev' })
  await auth.handleScan({ sceneStr, openid })
  const status = await auth.getStatus(sceneStr)
  if (status.status !== 'authorized') throw new Error(`no session for ${openid}: ${status.status}`)
  return status.sessionToken
}

describe('connections killed under load', () => {
  it('operations succeed or fail whole; points are spent once per success; invariants hold', async () => {
    const setup = createScanAuth({ store: new RedisStore({ client: admin, keyPrefix: prefix }), qr: new RecordingQrProvider(), now: clock.now })
    const lanes = [victim('resilient'), victim('strict', { maxRetriesPerRequest: 0 })]
    // Two payers per client: 40 points each, active before their first scan (the trial queues behind).
    const payers = ['payer-0', 'payer-1', 'payer-2', 'payer-3']
    for (const openid of payers) await setup.grant({ openid, type: 'points', points: 40 })
    const tokens = await Promise.all(payers.map((openid) => sessionFor(setup, openid)))
    const scenes = await Promise.all(Array.from({ length: 30 }, async (_, i) => (await setup.createScene({ deviceId: `dev-${i}` })).sceneStr))

    const tally = lanes.map(() => ({ ok: 0, failed: 0 }))
    const pointsSpent = new Map<string, { ok: number; failed: number }>(payers.map((p) => [p, { ok: 0, failed: 0 }]))
    const scansOf = new Map<string, { processed: number; failed: number }>(scenes.map((s) => [s, { processed: 0, failed: 0 }]))
    const grantsOf = new Map<string, { ok: number; failed: number }>()

    // Four workers per client; each loops over a mix of consumes, scans (two workers per scene),
    // grants by openid and polls.
    let finished = 0
    const workers = lanes.flatMap((lane, l) =>
      Array.from({ length: 4 }, async (_, w) => {
        for (let i = 0; i < 30; i++) {
          const kind = (i + w) % 4
          const payer = 2 * l + (i % 2)
          const scene = scenes[(i + 15 * (w % 2)) % scenes.length] as string
          const grantee = `granted-${l}-${i % 3}`
          try {
            if (kind === 0) {
              const used = await lane.auth.consume({ sessionToken: tokens[payer] as string })
              if (used.status === 'ok' && used.authorization.type === 'points') (pointsSpent.get(payers[payer] as string) as { ok: number }).ok++
            } else if (kind === 1) {
              const scan = await lane.auth.handleScan({ sceneStr: scene, openid: `scanner-${i % 5}` })
              if (scan.result !== 'invalid') (scansOf.get(scene) as { processed: number }).processed++
            } else if (kind === 2) {
              await lane.auth.grant({ openid: grantee, type: 'points', points: 1 })
              const g = grantsOf.get(grantee) ?? { ok: 0, failed: 0 }
              grantsOf.set(grantee, { ...g, ok: g.ok + 1 })
            } else {
              await lane.auth.getStatus(scene)
            }
            ;(tally[l] as { ok: number }).ok++
          } catch {
            ;(tally[l] as { failed: number }).failed++
            if (kind === 0) (pointsSpent.get(payers[payer] as string) as { failed: number }).failed++
            if (kind === 1) (scansOf.get(scene) as { failed: number }).failed++
            if (kind === 2) {
              const g = grantsOf.get(grantee) ?? { ok: 0, failed: 0 }
              grantsOf.set(grantee, { ...g, failed: g.failed + 1 })
            }
          }
        }
        finished++
      }),
    )
    const kills = killLoop(
      lanes.map((l) => l.connectionName),
      () => finished === workers.length,
    )
    await Promise.all(workers)
    const killed = await kills
    const [resilient, strict] = tally as [{ ok: number; failed: number }, { ok: number; failed: number }]
    console.info(
      `faults: ${killed} connections killed; default client ${resilient.ok} ok / ${resilient.failed} failed, ` +
        `strict client ${strict.ok} ok / ${strict.failed} failed`,
    )
    expect(killed).toBeGreaterThan(0)
    expect(resilient.ok + resilient.failed + strict.ok + strict.failed).toBe(240)

    const snapshot = await dumpRecords(admin, prefix)
    expect(checkInvariants(snapshot)).toEqual([])
    expect(halfAppliedWrites(snapshot)).toEqual([])
    // Points: each successful consume spent exactly one point; a failed one spent one or none.
    for (const openid of payers) {
      const user = snapshot.users.find((u) => u.openid === openid)
      const points = snapshot.authorizations.filter((a) => a.userId === user?.id && a.type === 'points')
      const spent = points.reduce((sum, a) => sum + a.totalPoints - a.remainingPoints, 0)
      const seen = pointsSpent.get(openid) as { ok: number; failed: number }
      expect(spent, openid).toBeGreaterThanOrEqual(seen.ok)
      expect(spent, openid).toBeLessThanOrEqual(seen.ok + seen.failed)
    }
    // Scans: at most one processed per scene; a scene is authorized only by a scan that succeeded or failed.
    for (const [sceneStr, seen] of scansOf) {
      const scene = snapshot.scenes.find((s) => s.sceneStr === sceneStr)
      expect(seen.processed, sceneStr).toBeLessThanOrEqual(1)
      if (seen.processed === 1) expect(scene?.status, sceneStr).toBe('authorized')
      if (scene?.status === 'authorized') expect(seen.processed + seen.failed, sceneStr).toBeGreaterThan(0)
    }
    // Grants: one authorization per successful grant, at most one more per failed one.
    for (const [openid, seen] of grantsOf) {
      const user = snapshot.users.find((u) => u.openid === openid)
      const stored = snapshot.authorizations.filter((a) => a.userId === user?.id).length
      expect(stored, openid).toBeGreaterThanOrEqual(seen.ok)
      expect(stored, openid).toBeLessThanOrEqual(seen.ok + seen.failed)
    }

    // Reconnected, both clients work again; a SCRIPT FLUSH in between changes nothing.
    await admin.script('FLUSH')
    for (const lane of lanes) {
      const token = await eventually(() => sessionFor(lane.auth, `after-${lane.connectionName}`))
      expect((await eventually(() => lane.auth.verifySession(token)))?.authorization?.source).toBe('free')
    }
  })

  it('a killed connection and a SCRIPT FLUSH in between: the store works again', async () => {
    const { client, auth, connectionName } = victim('plain')
    const token = await sessionFor(auth, 'alice')
    expect(await kill([connectionName])).toBe(1)
    await admin.script('FLUSH')
    // The next commands wait for the reconnect (ioredis queues them) and find no cached script.
    const again = await sessionFor(auth, 'alice')
    expect(await auth.verifySession(token)).toMatchObject({ deviceId: 'dev' })
    expect(await auth.verifySession(again)).toMatchObject({ deviceId: 'dev' })
    expect(client.status).toBe('ready')
    expect(checkInvariants(await dumpRecords(admin, prefix))).toEqual([])
  })
})

describe('replies lost after Redis executed the command', () => {
  const commitSha = new LuaScript(COMMIT_SCRIPT).sha
  const loadSha = new LuaScript(LOAD_SCRIPT).sha

  async function throughProxy(commitReceiptSeconds?: number) {
    const proxy = await startProxy({ host: new URL(REDIS_URL).hostname, port: Number(new URL(REDIS_URL).port || 6379) })
    const client = new Redis({ host: '127.0.0.1', port: proxy.port })
    client.on('error', () => {})
    opened.push(client)
    const store = new RedisStore({ client, keyPrefix: prefix, ...(commitReceiptSeconds === undefined ? {} : { commitReceiptSeconds }) })
    const auth = createScanAuth({ store, qr: new RecordingQrProvider(), now: clock.now })
    await auth.grant({ openid: 'alice', type: 'points', points: 10 })
    const token = await sessionFor(auth, 'alice')
    return { proxy, auth, token }
  }

  const remaining = async () => {
    const snapshot = await dumpRecords(admin, prefix)
    return snapshot.authorizations.find((a) => a.type === 'points')?.remainingPoints
  }

  it('a consume whose commit reply is lost is re-sent and answered from its receipt: spent once', async () => {
    const { proxy, auth, token } = await throughProxy()
    try {
      proxy.dropReplyTo(commitSha)
      expect(await auth.consume({ sessionToken: token })).toMatchObject({ status: 'ok', authorization: { remainingPoints: 9 } })
      expect(proxy.dropped()).toBe(1)
      expect(await remaining()).toBe(9)
      // A lost load reply is simply read again.
      proxy.dropReplyTo(loadSha)
      expect(await auth.consume({ sessionToken: token })).toMatchObject({ status: 'ok', authorization: { remainingPoints: 8 } })
      expect(proxy.dropped()).toBe(2)
      expect(await remaining()).toBe(8)
      expect(checkInvariants(await dumpRecords(admin, prefix))).toEqual([])
    } finally {
      await proxy.close()
    }
  })

  it('an order write whose reply is lost is re-sent and answered true from its receipt; without receipts, false', async () => {
    const saveOrderSha = new LuaScript(SAVE_ORDER_SCRIPT).sha
    const at = clock.now()
    const order = {
      outTradeNo: 'SA00000000000000000000000001', userId: 1, planId: 'month', description: 'm', amountFen: 1500,
      grant: { type: 'time' as const, days: 30 }, sceneStr: null, channel: 'native' as const, status: 'open' as const, createdAt: at,
      expiresAt: at + 900_000, updatedAt: at, paidAt: null, transactionId: null, authorizationId: null,
      refundedFen: 0, refunds: [], version: 1,
    }
    for (const [seconds, answer] of [[undefined, true], [0, false]] as const) {
      const proxy = await startProxy({ host: new URL(REDIS_URL).hostname, port: Number(new URL(REDIS_URL).port || 6379) })
      const client = new Redis({ host: '127.0.0.1', port: proxy.port })
      client.on('error', () => {})
      opened.push(client)
      const store = new RedisStore({ client, keyPrefix: prefix, ...(seconds === undefined ? {} : { commitReceiptSeconds: seconds }) })
      try {
        const no = `${order.outTradeNo.slice(0, -1)}${seconds ?? 9}`
        // Also caches the script, so that the update below is one EVALSHA naming its SHA1.
        expect(await store.saveOrder({ op: 'insert', order: { ...order, outTradeNo: no } })).toBe(true)
        proxy.dropReplyTo(saveOrderSha)
        const paid = { ...order, outTradeNo: no, status: 'paid' as const, paidAt: at, version: 2 }
        expect(await store.saveOrder({ op: 'update', order: paid, expectedVersion: 1 })).toBe(answer)
        expect(proxy.dropped()).toBe(1)
        // Applied once either way: the re-sent copy wrote nothing.
        expect(await store.loadOrder(no)).toStrictEqual(paid)
      } finally {
        await proxy.close()
      }
    }
  })

  it('control: without receipts the same fault spends twice (the re-sent commit conflicts, core plans again)', async () => {
    const { proxy, auth, token } = await throughProxy(0)
    try {
      proxy.dropReplyTo(commitSha)
      const used = await auth.consume({ sessionToken: token })
      expect(proxy.dropped()).toBe(1)
      expect(used).toMatchObject({ status: 'ok', authorization: { remainingPoints: 8 } })
      expect(await remaining()).toBe(8)
    } finally {
      await proxy.close()
    }
  })
})
