/**
 * A worker process of reminders-multiprocess.test.ts: testkit's reminder worker on its own
 * SqliteStore (its own connection) on the file the parent names in `SCANAUTH_SQLITE_FILE`.
 */
import { serveReminderWorker } from '@scanauth/testkit'
import { SqliteStore } from '@scanauth/sqlite'

await serveReminderWorker({
  openStore(env) {
    // Four processes write claims to one file at once, on a machine other work may keep busy: a
    // writer can wait on the lock longer than the default 5 s (SQLite's busy handler polls; it does
    // not queue), and a pass that gives up fails the test for a reason that is not the one checked.
    const store = new SqliteStore({ filename: env.SCANAUTH_SQLITE_FILE as string, busyTimeoutMs: 30_000 })
    return { store, close: () => store.close() }
  },
})
