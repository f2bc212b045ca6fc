// Issue 28's cross-process checks on SQLite (testkit's describeReminderProcesses): four worker
// processes (workers/reminder-worker.ts), each with its own SqliteStore on one file, run the same
// reminder pass at once over 1,000 due users, and one of them is killed mid-pass; the claims are
// read straight from the file (its counters table), the messages from the workers' log files.
import Database from 'better-sqlite3'
import { fileURLToPath } from 'node:url'
import { describeReminderProcesses } from '@scanauth/testkit'
import { SqliteStore } from '@scanauth/sqlite'
import { tempDb } from './support/files'

describeReminderProcesses('SqliteStore', {
  workerPath: fileURLToPath(new URL('./workers/reminder-worker.ts', import.meta.url)),
  cwd: fileURLToPath(new URL('..', import.meta.url)),
  async open() {
    const temp = await tempDb()
    // Opened (and so migrated) by the parent before any worker starts.
    const store = new SqliteStore({ filename: temp.filename })
    return {
      store,
      env: { SCANAUTH_SQLITE_FILE: temp.filename },
      counters: async (prefix) => {
        const db = new Database(temp.filename, { readonly: true })
        try {
          const rows = db.prepare('SELECT key, count FROM scanauth_counters WHERE substr(key, 1, length(?)) = ?').all(prefix, prefix) as Array<{ key: string; count: number }>
          return new Map(rows.map((r) => [r.key, r.count]))
        } finally {
          db.close()
        }
      },
      cleanup: async () => {
        await store.close()
        await temp.remove()
      },
    }
  },
})
