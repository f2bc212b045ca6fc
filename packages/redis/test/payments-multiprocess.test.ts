// Issue 18's cross-process checks on Redis (testkit's describePaymentProcesses): two worker
// processes (workers/payment-worker.ts), each with its own ioredis client on one key prefix, apply
// the same WeChat Pay notification at the same moment, or recover one whose process was killed
// between verification and grant; what they did is read straight from Redis (dumpRecords).
import { fileURLToPath } from 'node:url'
import { startWechatPayEmulator } from '@scanauth/wechat-emulator'
import { createWechatPayClient, createWechatPayProvider } from '@scanauth/wechat-pay'
import { describePaymentProcesses } from '@scanauth/testkit'
import { RedisStore } from '../src/index'
import { connect, deleteKeysUnder, dumpRecords, REDIS_URL, testPrefix } from './support/redis'

describePaymentProcesses('RedisStore', {
  startEmulator: startWechatPayEmulator,
  provider: (settings) => createWechatPayProvider(createWechatPayClient(settings)),
  workerPath: fileURLToPath(new URL('./workers/payment-worker.ts', import.meta.url)),
  cwd: fileURLToPath(new URL('..', import.meta.url)),
  async open() {
    const client = connect()
    const prefix = testPrefix()
    return {
      store: new RedisStore({ client, keyPrefix: prefix }),
      env: { REDIS_URL, SCANAUTH_PREFIX: prefix },
      dump: () => dumpRecords(client, prefix),
      cleanup: async () => {
        await deleteKeysUnder(client, prefix)
        await client.quit()
      },
    }
  },
})
