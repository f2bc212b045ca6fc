/**
 * The database schema as a list of migrations, and the code that brings a file up to date.
 *
 * Every table is named `scanauth_*`, so the store can share a database with the application's own
 * tables. `scanauth_schema_migrations` holds one row per applied migration; the file's schema
 * version is the highest `version` in it (0 when the table does not exist yet). Migrations only
 * ever get appended to {@link MIGRATIONS}: a released step is never edited, or files that already
 * applied it would silently differ from new ones.
 *
 * Column conventions: timestamps are INTEGER epoch milliseconds, booleans INTEGER 0/1, ids
 * `INTEGER PRIMARY KEY AUTOINCREMENT` (AUTOINCREMENT so that an id is never reused, even after the
 * row with the highest id was purged: ids stay increasing as the Store contract asks). The tables
 * are not STRICT on purpose: a clock that returns a fractional millisecond must round-trip exactly
 * as it does in MemoryStore rather than fail the commit.
 *
 * @module
 */
import type Database from 'better-sqlite3'
import { SqliteStoreError } from './errors'

/** One step of the schema's history. */
export interface Migration {
  /** 1, 2, 3, ...: the schema version the file has once this step is applied. */
  version: number
  /** What the step does, recorded in the version table. */
  name: string
  /** The statements of the step, run in the same transaction as its version row. */
  sql: string
}

/** The schema's history, oldest first. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'tables and lookup indexes',
    sql: `
      CREATE TABLE scanauth_users (
        id               INTEGER PRIMARY KEY AUTOINCREMENT,
        openid           TEXT    NOT NULL,
        created_at       INTEGER NOT NULL,
        last_seen_at     INTEGER NOT NULL,
        has_claimed_free INTEGER NOT NULL CHECK (has_claimed_free IN (0, 1)),
        version          INTEGER NOT NULL
      );
      CREATE UNIQUE INDEX scanauth_users_by_openid ON scanauth_users (openid);

      CREATE TABLE scanauth_scenes (
        id            INTEGER PRIMARY KEY AUTOINCREMENT,
        scene_str     TEXT    NOT NULL,
        device_id     TEXT    NOT NULL,
        status        TEXT    NOT NULL CHECK (status IN ('pending', 'scanned', 'authorized', 'expired')),
        user_id       INTEGER REFERENCES scanauth_users (id),
        created_at    INTEGER NOT NULL,
        expires_at    INTEGER NOT NULL,
        authorized_at INTEGER,
        version       INTEGER NOT NULL
      );
      CREATE UNIQUE INDEX scanauth_scenes_by_scene_str ON scanauth_scenes (scene_str);

      CREATE TABLE scanauth_authorizations (
        id               INTEGER PRIMARY KEY AUTOINCREMENT,
        user_id          INTEGER NOT NULL REFERENCES scanauth_users (id),
        type             TEXT    NOT NULL CHECK (type IN ('time', 'points')),
        status           TEXT    NOT NULL CHECK (status IN ('pending', 'active', 'expired', 'exhausted')),
        start_at         INTEGER NOT NULL,
        end_at           INTEGER,
        remaining_points INTEGER NOT NULL CHECK (remaining_points >= 0),
        total_points     INTEGER NOT NULL,
        source           TEXT    NOT NULL,
        created_at       INTEGER NOT NULL,
        updated_at       INTEGER NOT NULL
      );
      -- A user's live authorizations in FIFO order: user_id and status select, created_at and id order.
      CREATE INDEX scanauth_authorizations_by_user ON scanauth_authorizations (user_id, status, created_at, id);

      -- scene_id is deliberately not a foreign key: scenes and sessions are purged on their own
      -- deadlines (see purgeExpired), and nothing reads a scene through its session.
      CREATE TABLE scanauth_sessions (
        id         INTEGER PRIMARY KEY AUTOINCREMENT,
        token      TEXT    NOT NULL,
        user_id    INTEGER NOT NULL REFERENCES scanauth_users (id),
        device_id  TEXT    NOT NULL,
        scene_id   INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL
      );
      CREATE UNIQUE INDEX scanauth_sessions_by_token ON scanauth_sessions (token);
      -- The latest session of a scene: the last entry of the scene's range.
      CREATE INDEX scanauth_sessions_by_scene ON scanauth_sessions (scene_id, id);
    `,
  },
  {
    version: 2,
    name: 'expiry indexes for purgeExpired',
    sql: `
      CREATE INDEX scanauth_scenes_by_expiry ON scanauth_scenes (expires_at);
      CREATE INDEX scanauth_sessions_by_expiry ON scanauth_sessions (expires_at);
    `,
  },
]

/** The schema version this release writes and reads. */
export const SCHEMA_VERSION: number = MIGRATIONS[MIGRATIONS.length - 1]?.version ?? 0

/** The name of the version table. */
export const VERSION_TABLE = 'scanauth_schema_migrations'

/** What {@link migrate} did: the file's version before and after. */
export interface MigrationOutcome {
  from: number
  to: number
}

/**
 * Brings the file up to {@link SCHEMA_VERSION}, or refuses a file from a newer release with a
 * {@link SqliteStoreError} `schema_too_new`. Safe when several processes open one new file at
 * once: the check and every step run in one `BEGIN IMMEDIATE` transaction, so one process
 * migrates and the others then find the file current.
 */
export function migrate(db: Database.Database): MigrationOutcome {
  // Most opens find the file current: answer that from a plain read, without taking the write lock.
  const current = readVersion(db)
  if (current === SCHEMA_VERSION) return { from: current, to: current }
  if (current > SCHEMA_VERSION) throw tooNew(db, current)
  return db.transaction(() => {
    db.exec(`CREATE TABLE IF NOT EXISTS ${VERSION_TABLE} (
      version    INTEGER PRIMARY KEY,
      name       TEXT    NOT NULL,
      applied_at INTEGER NOT NULL
    )`)
    // Read again under the write lock: another process may have migrated in the meantime.
    const from = readVersion(db)
    if (from > SCHEMA_VERSION) throw tooNew(db, from)
    const record = db.prepare(`INSERT INTO ${VERSION_TABLE} (version, name, applied_at) VALUES (?, ?, ?)`)
    for (const step of MIGRATIONS) {
      if (step.version <= from) continue
      try {
        db.exec(step.sql)
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error)
        throw new SqliteStoreError('migration_failed', `migration ${step.version} (${step.name}) failed: ${reason}`, { cause: error })
      }
      // applied_at is bookkeeping for people reading the file, never an input to a decision.
      record.run(step.version, step.name, Date.now())
    }
    return { from, to: SCHEMA_VERSION }
  }).immediate()
}

/** The file's schema version: the highest applied migration, 0 for a file without our tables. */
export function readVersion(db: Database.Database): number {
  const table = db.prepare(`SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?`).pluck().get(VERSION_TABLE)
  if (table === undefined) return 0
  const version = db.prepare(`SELECT MAX(version) FROM ${VERSION_TABLE}`).pluck().get() as number | null
  return version ?? 0
}

function tooNew(db: Database.Database, found: number): SqliteStoreError {
  return new SqliteStoreError(
    'schema_too_new',
    `${db.name} has schema version ${found}, but this @scanauth/sqlite supports versions up to ${SCHEMA_VERSION}. ` +
      'It was written by a newer release: upgrade @scanauth/sqlite, or restore a backup taken before the upgrade.',
  )
}
