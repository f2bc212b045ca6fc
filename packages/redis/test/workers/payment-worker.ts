/**
 * A worker process of payments-multiprocess.test.ts: testkit's payment worker on its own ioredis
 * client and RedisStore, on the key prefix the parent names in `SCANAUTH_PREFIX`.
 */
import { Redis } from 'ioredis'
import { createWechatPayClient, createWechatPayNotificationHandler, createWechatPayProvider } from '@scanauth/wechat-pay'
import { servePaymentWorker } from '@scanauth/testkit'
import { RedisStore } from '../../src/index'

await servePaymentWorker({
  openStore(env) {
    const client = new Redis(env.REDIS_URL ?? 'redis://127.0.0.1:6379')
    return { store: new RedisStore({ client, keyPrefix: env.SCANAUTH_PREFIX as string }), close: async () => void (await client.quit()) }
  },
  provider: (settings) => createWechatPayProvider(createWechatPayClient(settings)),
  notificationHandler: createWechatPayNotificationHandler,
})
