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
import { MIGRATIONS_10_11 } from './migrations-10-11'
import type Database from 'better-sqlite3'
import type { SchemaState } from '@scanauth/core/store'
import { SqliteStoreError } from './errors'
import type { Migration } from './migration'
import { MIGRATION_7 } from './migration-7'

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
  {
    version: 3,
    name: 'entitlements: revoked status, ledger, idempotency keys, sessions by user',
    // SQLite cannot change a CHECK constraint in place, so scanauth_authorizations is rebuilt the
    // way https://sqlite.org/lang_altertable.html#otheralter describes (migrate() runs the steps
    // with foreign keys off and legacy_alter_table on, as that procedure needs): create the new
    // table, copy every row with its id, carry over the AUTOINCREMENT high-water mark (so an id is
    // still never reused), drop the old table, rename, and recreate its index.
    sql: `
      CREATE TABLE scanauth_authorizations_v3 (
        id               INTEGER PRIMARY KEY AUTOINCREMENT,
        user_id          INTEGER NOT NULL REFERENCES scanauth_users (id),
        type             TEXT    NOT NULL CHECK (type IN ('time', 'points')),
        status           TEXT    NOT NULL CHECK (status IN ('pending', 'active', 'expired', 'exhausted', 'revoked')),
        start_at         INTEGER NOT NULL,
        end_at           INTEGER,
        remaining_points INTEGER NOT NULL CHECK (remaining_points >= 0),
        total_points     INTEGER NOT NULL,
        source           TEXT    NOT NULL,
        created_at       INTEGER NOT NULL,
        updated_at       INTEGER NOT NULL
      );
      INSERT INTO scanauth_authorizations_v3
        (id, user_id, type, status, start_at, end_at, remaining_points, total_points, source, created_at, updated_at)
        SELECT id, user_id, type, status, start_at, end_at, remaining_points, total_points, source, created_at, updated_at
        FROM scanauth_authorizations ORDER BY id;
      DELETE FROM sqlite_sequence WHERE name = 'scanauth_authorizations_v3';
      INSERT INTO sqlite_sequence (name, seq)
        SELECT 'scanauth_authorizations_v3', seq FROM sqlite_sequence WHERE name = 'scanauth_authorizations';
      DROP TABLE scanauth_authorizations;
      ALTER TABLE scanauth_authorizations_v3 RENAME TO scanauth_authorizations;
      CREATE INDEX scanauth_authorizations_by_user ON scanauth_authorizations (user_id, status, created_at, id);

      -- Append-only: rows are never updated or deleted (purgeExpired leaves them alone).
      CREATE TABLE scanauth_ledger (
        id               INTEGER PRIMARY KEY AUTOINCREMENT,
        user_id          INTEGER NOT NULL REFERENCES scanauth_users (id),
        authorization_id INTEGER NOT NULL REFERENCES scanauth_authorizations (id),
        kind             TEXT    NOT NULL CHECK (kind IN ('grant', 'activate', 'consume', 'expire', 'exhaust', 'revoke')),
        points           INTEGER NOT NULL,
        remaining_points INTEGER NOT NULL,
        at               INTEGER NOT NULL,
        source           TEXT,
        idempotency_key  TEXT,
        reason           TEXT
      );
      -- The history of what the file already holds, so that every authorization's entries add up
      -- to it (docs/behaviour.md, B-ledger-1…5): per authorization, in id order, its grant, its
      -- activation unless pending, what was spent before the upgrade as one consume entry, and its
      -- end. Times are the best the old rows know: created_at, start_at (the activation time of a
      -- time authorization), updated_at.
      INSERT INTO scanauth_ledger (user_id, authorization_id, kind, points, remaining_points, at, source)
        SELECT user_id, authorization_id, kind, points, remaining_points, at, source FROM (
          SELECT id AS authorization_id, user_id, 1 AS step, 'grant' AS kind, total_points AS points,
            total_points AS remaining_points, created_at AS at, source
            FROM scanauth_authorizations
          UNION ALL
          SELECT id, user_id, 2, 'activate', 0, total_points, start_at, NULL
            FROM scanauth_authorizations WHERE status <> 'pending'
          UNION ALL
          SELECT id, user_id, 3, 'consume', remaining_points - total_points, remaining_points, updated_at, NULL
            FROM scanauth_authorizations WHERE status <> 'pending' AND remaining_points < total_points
          UNION ALL
          SELECT id, user_id, 4, CASE status WHEN 'expired' THEN 'expire' ELSE 'exhaust' END, 0, remaining_points, updated_at, NULL
            FROM scanauth_authorizations WHERE status IN ('expired', 'exhausted')
        )
        ORDER BY authorization_id, step;
      -- A user's entries by id: listLedger's keyset pages.
      CREATE INDEX scanauth_ledger_by_user ON scanauth_ledger (user_id, id);

      -- Keyed by the caller's key itself (WITHOUT ROWID: one b-tree, no separate key index). Kept
      -- for good: never purged, so a key is remembered at least as long as its authorization.
      CREATE TABLE scanauth_idempotency (
        key              TEXT    NOT NULL PRIMARY KEY,
        fingerprint      TEXT    NOT NULL,
        authorization_id INTEGER REFERENCES scanauth_authorizations (id),
        result           TEXT,
        created_at       INTEGER NOT NULL
      ) WITHOUT ROWID;

      -- endSessions({ userId }): the user's sessions still live at a time.
      CREATE INDEX scanauth_sessions_by_user ON scanauth_sessions (user_id, expires_at);
    `,
  },
  {
    version: 4,
    name: 'counters: rate limits, replay and duplicate records',
    // Store.incrementCounter / deleteCounter. Keyed by the caller's key itself (WITHOUT ROWID: one
    // b-tree, the upsert finds and rewrites the row in it). A row whose expires_at has passed is
    // dead: the next increment restarts it, and purgeExpired deletes it through the expiry index.
    sql: `
      CREATE TABLE scanauth_counters (
        key        TEXT    PRIMARY KEY,
        count      INTEGER NOT NULL,
        expires_at INTEGER NOT NULL
      ) WITHOUT ROWID;
      CREATE INDEX scanauth_counters_by_expiry ON scanauth_counters (expires_at);
    `,
  },
  {
    version: 5,
    name: 'scene change log for watchScenes',
    // One row per scene a commit writes, appended in the commit's own transaction, so that other
    // processes on the file learn which scenes changed (watchScenes, docs/behaviour.md B-wait-4;
    // docs/sqlite.md, "Waiting for a scan"). AUTOINCREMENT: ids follow commit order and are never
    // reused, so "rows after the last id I read" is exactly what changed since. Commits prune it
    // (change-log.ts): it holds the last 10,000 to 11,000 rows.
    sql: `
      CREATE TABLE scanauth_scene_changes (
        id        INTEGER PRIMARY KEY AUTOINCREMENT,
        scene_str TEXT    NOT NULL
      );
    `,
  },
  {
    version: 6,
    name: 'orders',
    // Store.loadOrder / saveOrder / listOpenOrders (orders.ts). Keyed by out_trade_no itself
    // (WITHOUT ROWID: one b-tree, the insert's conflict and the update's version check are one
    // probe of it). Never purged: an order is the record of money taken.
    //
    // The grant is columns, not JSON: it is one of two fixed shapes, and as columns the CHECK keeps
    // it to those two and support can ask "what did these orders grant" in plain SQL. Days are a
    // REAL (a plan may grant half a day), points an INTEGER; the column of the other type is NULL. The refunds are a JSON array in one TEXT column: a list of any length that is only
    // ever read and replaced whole with its order (saveOrder stores the order as given), so a child
    // table would turn every write into a diff of rows for nothing; JSON numbers hold every fen
    // amount up to Number.MAX_SAFE_INTEGER exactly. user_id is not a foreign key: the order is
    // written on its own, outside the commit that may insert its user, and stays after anything.
    //
    // The three listing indexes end in (status, created_at, out_trade_no), so the open orders of
    // all, of one user or of one scene are one range each, already in listOpenOrders' order.
    sql: `
      CREATE TABLE scanauth_orders (
        out_trade_no     TEXT    NOT NULL PRIMARY KEY,
        user_id          INTEGER NOT NULL,
        plan_id          TEXT    NOT NULL,
        description      TEXT    NOT NULL,
        amount_fen       INTEGER NOT NULL,
        grant_type       TEXT    NOT NULL,
        grant_days       REAL,
        grant_points     INTEGER,
        scene_str        TEXT,
        status           TEXT    NOT NULL CHECK (status IN ('open', 'paid', 'closed', 'refunded')),
        created_at       INTEGER NOT NULL,
        expires_at       INTEGER NOT NULL,
        updated_at       INTEGER NOT NULL,
        paid_at          INTEGER,
        transaction_id   TEXT,
        authorization_id INTEGER,
        refunded_fen     INTEGER NOT NULL,
        refunds          TEXT    NOT NULL,
        version          INTEGER NOT NULL,
        CHECK ((grant_type = 'time' AND grant_days IS NOT NULL AND grant_points IS NULL)
            OR (grant_type = 'points' AND grant_points IS NOT NULL AND grant_days IS NULL))
      ) WITHOUT ROWID;
      CREATE INDEX scanauth_orders_open ON scanauth_orders (status, created_at, out_trade_no);
      CREATE INDEX scanauth_orders_by_user ON scanauth_orders (user_id, status, created_at, out_trade_no);
      CREATE INDEX scanauth_orders_by_scene ON scanauth_orders (scene_str, status, created_at, out_trade_no);
    `,
  },
  // Rebuilds scanauth_scenes for confirm on the phone and the poll secret; see migration-7.ts.
  MIGRATION_7,
  {
    version: 8,
    name: 'closed orders by payment deadline for purgeExpired',
    // purgeExpired now deletes a closed order that never took money once past its payment deadline
    // (docs/behaviour.md, B-order-purge; orders.ts, purgeOrders); open, paid and refunded orders
    // stay for good. The index is partial: only closed orders are in it, so the orders kept for
    // good cost it nothing, and a purge batch reads the closed ones in expires_at order up to the
    // cutoff, one range that LIMIT stops. SQLite uses it for a statement whose WHERE has
    // `status = 'closed'` (https://sqlite.org/partialindex.html). Creating it reads the orders once,
    // inside migrate()'s transaction; no row changes.
    sql: `
      CREATE INDEX scanauth_orders_closed_by_expiry ON scanauth_orders (expires_at) WHERE status = 'closed';
    `,
  },
  {
    version: 9,
    name: 'orders by time and by user for listOrders',
    // Store.listOrders (operator-reads.ts), the operator's listing of orders of any status, oldest
    // first by (created_at, out_trade_no) after an exclusive cursor. Two of its four sets of filters
    // already have an index in that order after their equalities: one status
    // (scanauth_orders_open, which holds every status), one user and one status
    // (scanauth_orders_by_user). These two serve the others, all orders and one user's orders
    // whatever their status, so every page is one range that LIMIT stops, never a sort of the
    // table or of a user's history. Creating them reads the orders once, inside migrate()'s
    // transaction; no row changes.
    sql: `
      CREATE INDEX scanauth_orders_by_time ON scanauth_orders (created_at, out_trade_no);
      CREATE INDEX scanauth_orders_by_user_time ON scanauth_orders (user_id, created_at, out_trade_no);
    `,
  },
  ...MIGRATIONS_10_11,
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
  // A step may rebuild a table (create, copy, drop, rename; migrations 3 and 7 do). SQLite's procedure
  // for that wants foreign keys off, and that pragma is a no-op inside a transaction, so it is set
  // around it (and the foreign keys of our tables checked before the commit instead). With
  // legacy_alter_table on, the rename leaves alone the application's own views that name our
  // table, which would otherwise make it fail ("error in view ...: no such table").
  const foreignKeys = db.pragma('foreign_keys', { simple: true }) === 1
  const legacyAlter = db.pragma('legacy_alter_table', { simple: true }) === 1
  if (foreignKeys) db.pragma('foreign_keys = OFF')
  db.pragma('legacy_alter_table = ON')
  try {
    return runSteps(db, foreignKeys)
  } finally {
    db.pragma(`legacy_alter_table = ${legacyAlter ? 'ON' : 'OFF'}`)
    if (foreignKeys) db.pragma('foreign_keys = ON')
  }
}

/** Every missing step and its version row, in one immediate transaction. */
function runSteps(db: Database.Database, checkForeignKeys: boolean): MigrationOutcome {
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
    if (checkForeignKeys) assertForeignKeys(db)
    return { from, to: SCHEMA_VERSION }
  }).immediate()
}

/** Throws `migration_failed` (rolling the migration back) when a row of our tables breaks a foreign key. */
function assertForeignKeys(db: Database.Database): void {
  // Only our own tables: a violation in the application's tables is not ours to refuse.
  const tables = db.prepare(`SELECT name FROM sqlite_schema WHERE type = 'table' AND name LIKE 'scanauth\\_%' ESCAPE '\\'`).pluck().all() as string[]
  for (const table of tables) {
    const broken = db.pragma(`foreign_key_check(${table})`) as Array<{ rowid: number; parent: string }>
    const first = broken[0]
    if (first !== undefined) {
      throw new SqliteStoreError('migration_failed', `after migrating, row ${first.rowid} of ${table} names a missing row of ${first.parent}`)
    }
  }
}

/** The file's schema version: the highest applied migration, 0 for a file without our tables. */
export function readVersion(db: Database.Database): number {
  const table = db.prepare(`SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?`).pluck().get(VERSION_TABLE)
  if (table === undefined) return 0
  const version = db.prepare(`SELECT MAX(version) FROM ${VERSION_TABLE}`).pluck().get() as number | null
  return version ?? 0
}

/** Where the file's schema stands (`Store.schemaState`): its version, ours, and the steps `migrate` would apply. */
export function readSchemaState(db: Database.Database): SchemaState {
  const version = readVersion(db)
  const pending = MIGRATIONS.filter((m) => m.version > version).map((m) => ({ version: m.version, name: m.name }))
  return { version, latest: SCHEMA_VERSION, pending, exists: true }
}

function tooNew(db: Database.Database, found: number): SqliteStoreError {
  return new SqliteStoreError(
    'schema_too_new',
    `${db.name} has schema version ${found}, but this @scanauth/sqlite supports versions up to ${SCHEMA_VERSION}. ` +
      'It was written by a newer release: upgrade @scanauth/sqlite, or restore a backup taken before the upgrade.',
  )
}
