/**
 * A worker process of reminders-multiprocess.test.ts: testkit's reminder worker on its own ioredis
 * client and RedisStore, on the key prefix the parent names in `SCANAUTH_PREFIX`.
 */
import { Redis } from 'ioredis'
import { serveReminderWorker } from '@scanauth/testkit'
import { RedisStore } from '../../src/index'

await serveReminderWorker({
  openStore(env) {
    const client = new Redis(env.REDIS_URL ?? 'redis://127.0.0.1:6379')
    return { store: new RedisStore({ client, keyPrefix: env.SCANAUTH_PREFIX as string }), close: async () => void (await client.quit()) }
  },
})
