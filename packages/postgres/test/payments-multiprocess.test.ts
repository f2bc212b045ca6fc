// Issue 18's cross-process checks on PostgreSQL (testkit's describePaymentProcesses): two worker
// processes (workers/payment-worker.ts), each with its own pg.Pool and PostgresStore on one schema,
// apply the same WeChat Pay notification at the same moment, or recover one whose process was
// killed between verification and grant; what they did is read straight from the tables
// (readTables).
import { fileURLToPath } from 'node:url'
import { afterAll } from 'vitest'
import { startWechatPayEmulator } from '@scanauth/wechat-emulator'
import { createWechatPayClient, createWechatPayProvider } from '@scanauth/wechat-pay'
import { describePaymentProcesses } from '@scanauth/testkit'
import { PostgresStore } from '@scanauth/postgres'
import { noBackendsLeft } from './support/backends'
import { DATABASE_URL, dropSchema, freshSchemaName, openPool } from './support/database'
import { readTables } from './support/tables'

const pool = openPool(4)
afterAll(() => pool.end())

describePaymentProcesses('PostgresStore', {
  startEmulator: startWechatPayEmulator,
  provider: (settings) => createWechatPayProvider(createWechatPayClient(settings)),
  workerPath: fileURLToPath(new URL('./workers/payment-worker.ts', import.meta.url)),
  cwd: fileURLToPath(new URL('..', import.meta.url)),
  async open() {
    const schema = freshSchemaName()
    const applicationName = `${schema}_workers`
    const store = new PostgresStore({ pool, schema })
    // Migrated here, before any worker starts; the workers' own migrate() then finds it done.
    await store.migrate()
    return {
      store,
      env: { SCANAUTH_DATABASE_URL: DATABASE_URL, SCANAUTH_SCHEMA: schema, SCANAUTH_APPLICATION_NAME: applicationName },
      dump: () => readTables(pool, schema),
      cleanup: async () => {
        // A killed worker's backends end when the server notices its closed socket.
        await noBackendsLeft(pool, applicationName)
        await store.close()
        await dropSchema(pool, schema)
      },
    }
  },
})
