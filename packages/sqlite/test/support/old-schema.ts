/**
 * A file at an older schema version, for the upgrade tests: the released steps up to `version`
 * applied with raw SQL and recorded in the version table, as the release that stopped there left
 * it. Released steps are never edited (src/schema.ts), so `MIGRATIONS` holds them exactly.
 */
import type Database from 'better-sqlite3'
import { MIGRATIONS, VERSION_TABLE } from '@scanauth/sqlite'

/** Brings the empty database `db` to schema `version` exactly, and no further. */
export function writeSchemaUpTo(db: Database.Database, version: number): void {
  // As migrate() does: a step that rebuilds a table (3) wants foreign keys off around it.
  db.pragma('foreign_keys = OFF')
  db.transaction(() => {
    db.exec(`CREATE TABLE ${VERSION_TABLE} (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`)
    for (const step of MIGRATIONS.filter((m) => m.version <= version)) {
      db.exec(step.sql)
      db.prepare(`INSERT INTO ${VERSION_TABLE} (version, name, applied_at) VALUES (?, ?, 0)`).run(step.version, step.name)
    }
  })()
  db.pragma('foreign_keys = ON')
}
