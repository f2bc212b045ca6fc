/**
 * A worker process of reminders-multiprocess.test.ts: testkit's reminder worker on its own pg.Pool
 * (tagged with the test's `application_name`) and PostgresStore, on the schema the parent names in
 * `SCANAUTH_SCHEMA`.
 */
import pg from 'pg'
import { serveReminderWorker } from '@scanauth/testkit'
import { PostgresStore } from '@scanauth/postgres'

await serveReminderWorker({
  async openStore(env) {
    const pool = new pg.Pool({ connectionString: env.SCANAUTH_DATABASE_URL, max: 4, application_name: env.SCANAUTH_APPLICATION_NAME })
    const store = new PostgresStore({ pool, schema: env.SCANAUTH_SCHEMA })
    // The parent migrated the schema; this only tells the store so (it refuses work before).
    await store.migrate()
    return {
      store,
      close: async () => {
        await store.close()
        await pool.end()
      },
    }
  },
})
