// Issue 28's cross-process checks on Redis (testkit's describeReminderProcesses): four worker
// processes (workers/reminder-worker.ts), each with its own ioredis client on one key prefix, run
// the same reminder pass at once over 1,000 due users, and one of them is killed mid-pass; the
// claims are read straight from Redis (the counter keys, `<prefix>c:<key>` holding `count|expiresAt`),
// the messages from the workers' log files.
import { fileURLToPath } from 'node:url'
import type { Redis } from 'ioredis'
import { describeReminderProcesses } from '@scanauth/testkit'
import { RedisStore } from '../src/index'
import { connect, deleteKeysUnder, REDIS_URL, testPrefix } from './support/redis'

/** Every counter under `prefix` whose key starts with `start`: key → count. */
async function countersUnder(client: Redis, prefix: string, start: string): Promise<Map<string, number>> {
  const out = new Map<string, number>()
  const head = `${prefix}c:`
  let cursor = '0'
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${head}${start}*`, 'COUNT', 1000)
    const values = keys.length === 0 ? [] : await client.mget(...keys)
    keys.forEach((key, i) => {
      const value = values[i]
      if (value !== null && value !== undefined) out.set(key.slice(head.length), Number(value.split('|')[0]))
    })
    cursor = next
  } while (cursor !== '0')
  return out
}

describeReminderProcesses('RedisStore', {
  workerPath: fileURLToPath(new URL('./workers/reminder-worker.ts', import.meta.url)),
  cwd: fileURLToPath(new URL('..', import.meta.url)),
  // Commands wait on the network: more seeding calls in flight.
  seedConcurrency: 32,
  async open() {
    const client = connect()
    const prefix = testPrefix()
    return {
      store: new RedisStore({ client, keyPrefix: prefix }),
      env: { REDIS_URL, SCANAUTH_PREFIX: prefix },
      counters: (start) => countersUnder(client, prefix, start),
      cleanup: async () => {
        await deleteKeysUnder(client, prefix)
        await client.quit()
      },
    }
  },
})
