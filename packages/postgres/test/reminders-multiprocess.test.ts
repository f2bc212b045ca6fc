// Issue 28's cross-process checks on PostgreSQL (testkit's describeReminderProcesses): four worker
// processes (workers/reminder-worker.ts), each with its own pg.Pool and PostgresStore on one schema,
// run the same reminder pass at once over 1,000 due users, and one of them is killed mid-pass; the
// claims are read straight from the schema's counters table, the messages from the workers' log
// files.
import { fileURLToPath } from 'node:url'
import { afterAll } from 'vitest'
import { describeReminderProcesses } from '@scanauth/testkit'
import { PostgresStore } from '@scanauth/postgres'
import { noBackendsLeft } from './support/backends'
import { DATABASE_URL, dropSchema, freshSchemaName, openPool } from './support/database'

const pool = openPool(10)
afterAll(() => pool.end())

describeReminderProcesses('PostgresStore', {
  workerPath: fileURLToPath(new URL('./workers/reminder-worker.ts', import.meta.url)),
  cwd: fileURLToPath(new URL('..', import.meta.url)),
  // Statements wait on the server: more seeding calls in flight (the pool holds 10).
  seedConcurrency: 16,
  async open() {
    const schema = freshSchemaName()
    const applicationName = `${schema}_workers`
    const store = new PostgresStore({ pool, schema })
    // Migrated here, before any worker starts; the workers' own migrate() then finds it done.
    await store.migrate()
    return {
      store,
      env: { SCANAUTH_DATABASE_URL: DATABASE_URL, SCANAUTH_SCHEMA: schema, SCANAUTH_APPLICATION_NAME: applicationName },
      counters: async (prefix) => {
        const { rows } = await pool.query<{ key: string; count: string }>(`SELECT key, count FROM "${schema}".scanauth_counters WHERE starts_with(key, $1)`, [prefix])
        return new Map(rows.map((r) => [r.key, Number(r.count)]))
      },
      cleanup: async () => {
        // A killed worker's backends end when the server notices its closed socket.
        await noBackendsLeft(pool, applicationName)
        await store.close()
        await dropSchema(pool, schema)
      },
    }
  },
})
