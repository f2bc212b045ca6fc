/**
 * The CLI on Redis (REDIS_URL, default redis://127.0.0.1:6379) under a key prefix of this test's own,
 * deleted afterwards, while a server in this process uses it: the whole scenario, then what only
 * Redis can get wrong (unreachable, an empty prefix, data of an older key layout), each refusal
 * checked against a DUMP of every key under the prefix.
 */
import { randomUUID } from 'node:crypto'
import { Redis } from 'ioredis'
import { RedisStore } from '@scanauth/redis'
import { closedPort } from '@scanauth/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { expectRefusal, json, scanauth, succeeds } from './support/cli'
import { describeRemindersScenario } from './support/reminders'
import { describeCliScenario, expectRefusedWithoutWrites, type Backend } from './support/scenario'
import { Device, keepWaiting, startServer, type LiveServer } from './support/server'
import { keysUnder, redisSnapshot } from './support/snapshots'

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'

/** A prefix of this test's own on the shared server. */
function testPrefix(): string {
  return `scanauth-cli-test:${randomUUID()}:`
}

/** Deletes every key under `prefix`. */
async function removeKeys(client: Redis, prefix: string): Promise<void> {
  const keys = await keysUnder(client, prefix)
  if (keys.length > 0) await client.del(...keys)
}

function redisBackend(): Backend & { client: Redis; prefix: string } {
  const prefix = testPrefix()
  const client = new Redis(REDIS_URL)
  // Receipts kept longer than the test, so that none expires between two snapshots.
  const store = new RedisStore({ client, keyPrefix: prefix, commitReceiptSeconds: 24 * 3600 })
  return {
    kind: 'redis',
    client,
    prefix,
    storeArgs: ['--redis', REDIS_URL, '--redis-prefix', prefix],
    storeEnv: { SCANAUTH_STORE: 'redis', REDIS_URL, SCANAUTH_REDIS_PREFIX: prefix },
    serverStore: store,
    schemaVersion: null,
    snapshot: () => redisSnapshot(client, prefix),
    close: async () => {
      await store.close()
      await removeKeys(client, prefix)
      await client.quit()
    },
  }
}

describeCliScenario('Redis', async () => redisBackend())
describeRemindersScenario('Redis', async () => redisBackend())

describe('scanauth on Redis: servers and prefixes it refuses', () => {
  let backend: ReturnType<typeof redisBackend>
  let server: LiveServer
  let waiter: ReturnType<typeof keepWaiting>
  const others: string[] = []

  beforeAll(async () => {
    backend = redisBackend()
    server = await startServer(backend.serverStore)
    const kiosk = new Device(server.url, 'kiosk')
    await server.auth.handleScan({ sceneStr: await kiosk.createScene(), openid: 'o6_dave' })
    waiter = keepWaiting(kiosk, await kiosk.createScene())
  })

  afterAll(async () => {
    await waiter?.stop()
    await server?.close()
    for (const prefix of others) await removeKeys(backend.client, prefix)
    await backend?.close()
  })

  it('refuses a server that does not answer, and writes nothing', async () => {
    const port = await closedPort()
    await expectRefusedWithoutWrites(backend, [
      [['grant', 'o6_dave', '--days', '3', '--redis', `redis://127.0.0.1:${port}`, '--redis-prefix', backend.prefix], 1, new RegExp(`^scanauth: cannot reach Redis at redis://127\\.0\\.0\\.1:${port} \\(--redis\\): .*ECONNREFUSED`)],
      [['user', 'o6_dave'], 1, /cannot reach Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:\d+ \(REDIS_URL\)/],
    ], { SCANAUTH_STORE: 'redis', REDIS_URL: `redis://:hunter2@127.0.0.1:${port}`, SCANAUTH_REDIS_PREFIX: backend.prefix })
  })

  it('refuses a prefix nothing was written under (a typo) and leaves it empty; migrate says there is nothing to migrate', async () => {
    const empty = testPrefix()
    others.push(empty)
    for (const argv of [['user', 'o6_dave'], ['grant', 'o6_dave', '--points', '3'], ['signout', 'o6_dave'], ['purge']]) {
      const line = expectRefusal(await scanauth([...argv, '--redis', REDIS_URL, '--redis-prefix', empty]), 1)
      expect(line).toBe(`scanauth: nothing is stored under the prefix ${JSON.stringify(empty)} at ${new URL(REDIS_URL).toString()} (--redis): is it the prefix your servers use? (--redis-prefix or SCANAUTH_REDIS_PREFIX)`)
    }
    expect(await json(['migrate', '--redis', REDIS_URL, '--redis-prefix', empty])).toEqual({ store: 'redis', from: null, to: null, migrated: false })
    expect(await keysUnder(backend.client, empty)).toEqual([])
  })

  it('refuses a prefix of the key layout of @scanauth/redis 0.1.0, also for migrate, and writes nothing', async () => {
    const old = testPrefix()
    others.push(old)
    // 0.1.0 kept its counters hash without a layout field.
    await backend.client.hset(`${old}seq`, 'u', '1')
    await backend.client.set(`${old}u:1`, 'an old user record')
    const before = await redisSnapshot(backend.client, old)
    for (const argv of [['user', 'o6_dave'], ['grant', 'o6_dave', '--days', '1'], ['migrate']]) {
      expectRefusal(await scanauth([...argv, '--redis', REDIS_URL, '--redis-prefix', old]), 1, /holds data of key layout 1 and this CLI reads layout 2; Redis data is not migrated: use a fresh prefix/)
    }
    expect(await redisSnapshot(backend.client, old)).toBe(before)
  })

  it('live sessions: counted from the user\'s session index, the latest listed first', async () => {
    const phones = [new Device(server.url, 'phone-1'), new Device(server.url, 'phone-2'), new Device(server.url, 'phone-3')]
    for (const phone of phones) await server.auth.handleScan({ sceneStr: await phone.createScene(), openid: 'o6_erin' })
    const out = await json(['user', 'o6_erin', ...backend.storeArgs])
    expect(out.sessions.live).toBe(3)
    expect(out.sessions.latest.map((s: { deviceId: string }) => s.deviceId)).toEqual(['phone-3', 'phone-2', 'phone-1'])
    expect((await succeeds(['signout', 'o6_erin', ...backend.storeArgs])).stdout).toMatch(/: 3 sessions ended\n$/)
  })
})
