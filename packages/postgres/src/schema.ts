/**
 * The database schema as a list of migrations, and `migrate()`, which brings a schema up to date.
 *
 * Every table is named `scanauth_*` inside the store's PostgreSQL schema (default `public`), so the
 * store can share a database with the application's own tables. `scanauth_schema_migrations` holds
 * one row per applied migration; the schema version is the highest `version` in it. Migrations only
 * ever get appended to the list: a released step is never edited, or databases that already applied
 * it would silently differ from new ones.
 *
 * Column conventions: timestamps are `double precision` epoch milliseconds, which is exactly a
 * JavaScript number, so whatever the service's clock returns (a fractional millisecond included)
 * round-trips as it does in MemoryStore; ids are `bigint GENERATED ALWAYS AS IDENTITY` (never reused,
 * increasing in commit order within one commit, as the Store contract asks); strings that are looked
 * up by equality (`scene_str`, `openid`, `token`, keys) use `COLLATE "C"`: compared byte for byte,
 * never normalized, whatever the database's locale.
 *
 * @module
 */
import type { Pool, PoolClient } from 'pg'
import { commitFunctionSql, commitFunctionV3Sql } from './commit-function'
import { PostgresStoreError } from './errors'

/** One step of the schema's history. */
export interface Migration {
  /** 1, 2, 3, ...: the schema version once this step is applied. */
  version: number
  /** What the step does, recorded in the version table. */
  name: string
  /** The statements of the step for the quoted schema name `s`, run in the transaction of its version row. */
  sql(s: string): string
}

/** The schema's history, oldest first. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'tables, lookup indexes and the commit function',
    sql: (s) => `
      CREATE TABLE ${s}.scanauth_users (
        id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        openid           text COLLATE "C" NOT NULL,
        created_at       double precision NOT NULL,
        last_seen_at     double precision NOT NULL,
        has_claimed_free boolean NOT NULL,
        version          bigint NOT NULL,
        CONSTRAINT scanauth_users_openid_key UNIQUE (openid)
      );

      CREATE TABLE ${s}.scanauth_scenes (
        id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        scene_str     text COLLATE "C" NOT NULL,
        device_id     text NOT NULL,
        status        text NOT NULL CHECK (status IN ('pending', 'scanned', 'authorized', 'expired')),
        user_id       bigint REFERENCES ${s}.scanauth_users (id),
        created_at    double precision NOT NULL,
        expires_at    double precision NOT NULL,
        authorized_at double precision,
        version       bigint NOT NULL,
        CONSTRAINT scanauth_scenes_scene_str_key UNIQUE (scene_str)
      );
      CREATE INDEX scanauth_scenes_by_expiry ON ${s}.scanauth_scenes (expires_at);

      CREATE TABLE ${s}.scanauth_authorizations (
        id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        user_id          bigint NOT NULL REFERENCES ${s}.scanauth_users (id),
        type             text NOT NULL CHECK (type IN ('time', 'points')),
        status           text NOT NULL CHECK (status IN ('pending', 'active', 'expired', 'exhausted', 'revoked')),
        start_at         double precision NOT NULL,
        end_at           double precision,
        remaining_points bigint NOT NULL CHECK (remaining_points >= 0),
        total_points     bigint NOT NULL,
        source           text NOT NULL,
        created_at       double precision NOT NULL,
        updated_at       double precision NOT NULL
      );
      -- A user's live authorizations in FIFO order: user_id and status select, created_at and id order.
      CREATE INDEX scanauth_authorizations_by_user ON ${s}.scanauth_authorizations (user_id, status, created_at, id);

      -- scene_id is deliberately not a foreign key: scenes and sessions expire on their own deadlines.
      CREATE TABLE ${s}.scanauth_sessions (
        id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        token      text COLLATE "C" NOT NULL,
        user_id    bigint NOT NULL REFERENCES ${s}.scanauth_users (id),
        device_id  text NOT NULL,
        scene_id   bigint NOT NULL,
        created_at double precision NOT NULL,
        expires_at double precision NOT NULL,
        CONSTRAINT scanauth_sessions_token_key UNIQUE (token)
      );
      -- The latest session of a scene: the last entry of the scene's range.
      CREATE INDEX scanauth_sessions_by_scene ON ${s}.scanauth_sessions (scene_id, id);
      -- endSessions({ userId }): the user's sessions still live at a time.
      CREATE INDEX scanauth_sessions_by_user ON ${s}.scanauth_sessions (user_id, expires_at);
      CREATE INDEX scanauth_sessions_by_expiry ON ${s}.scanauth_sessions (expires_at);

      -- Append-only: rows are never updated or deleted.
      CREATE TABLE ${s}.scanauth_ledger (
        id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        user_id          bigint NOT NULL REFERENCES ${s}.scanauth_users (id),
        authorization_id bigint NOT NULL REFERENCES ${s}.scanauth_authorizations (id),
        kind             text NOT NULL CHECK (kind IN ('grant', 'activate', 'consume', 'expire', 'exhaust', 'revoke')),
        points           bigint NOT NULL,
        remaining_points bigint NOT NULL,
        at               double precision NOT NULL,
        source           text,
        idempotency_key  text,
        reason           text
      );
      -- A user's entries by id: listLedger's keyset pages.
      CREATE INDEX scanauth_ledger_by_user ON ${s}.scanauth_ledger (user_id, id);

      -- Kept for good: a key is remembered at least as long as its authorization.
      CREATE TABLE ${s}.scanauth_idempotency (
        key              text COLLATE "C" PRIMARY KEY,
        fingerprint      text NOT NULL,
        authorization_id bigint REFERENCES ${s}.scanauth_authorizations (id),
        result           text,
        created_at       double precision NOT NULL
      );

      -- Store.incrementCounter / deleteCounter: rate limits, WeChat replay and duplicate records.
      -- A row whose expires_at has passed is dead: the next increment restarts it.
      CREATE TABLE ${s}.scanauth_counters (
        key        text COLLATE "C" PRIMARY KEY,
        count      bigint NOT NULL,
        expires_at double precision NOT NULL
      );
      CREATE INDEX scanauth_counters_by_expiry ON ${s}.scanauth_counters (expires_at);

      ${commitFunctionSql(s)}
    `,
  },
  {
    version: 2,
    name: 'orders',
    // Store.loadOrder / saveOrder / listOpenOrders (orders.ts): an order is its own aggregate,
    // written one statement at a time, never inside scanauth_commit. Never purged: an order is the
    // record of money taken.
    //
    // Fen amounts are bigint (up to Number.MAX_SAFE_INTEGER; the store's type parser reads them
    // back as numbers), times double precision like every other time here. The grant is columns,
    // not JSON: one of two fixed shapes, kept to them by the CHECK and readable in plain SQL; days
    // are double precision (a plan may grant half a day), points bigint, the other one NULL. The
    // refunds are one jsonb array: a list of any length that is only ever read and replaced whole
    // with its order (saveOrder stores the order as given), so a child table would turn every
    // write into a diff of rows for nothing. user_id is not a foreign key: the order is written
    // outside the commit that may insert its user. out_trade_no and scene_str are COLLATE "C",
    // like every looked-up string: byte order is also the order listOpenOrders promises (that of
    // JavaScript's \`<\` on the ASCII of an outTradeNo), whatever the database's locale.
    //
    // The three listing indexes end in (status, created_at, out_trade_no), so the open orders of
    // all, of one user or of one scene are one range each, already in listOpenOrders' order, and
    // the row-value cursor is an index condition of that range.
    sql: (s) => `
      CREATE TABLE ${s}.scanauth_orders (
        out_trade_no     text COLLATE "C" PRIMARY KEY,
        user_id          bigint NOT NULL,
        plan_id          text NOT NULL,
        description      text NOT NULL,
        amount_fen       bigint NOT NULL,
        grant_type       text NOT NULL,
        grant_days       double precision,
        grant_points     bigint,
        scene_str        text COLLATE "C",
        status           text NOT NULL CHECK (status IN ('open', 'paid', 'closed', 'refunded')),
        created_at       double precision NOT NULL,
        expires_at       double precision NOT NULL,
        updated_at       double precision NOT NULL,
        paid_at          double precision,
        transaction_id   text,
        authorization_id bigint,
        refunded_fen     bigint NOT NULL,
        refunds          jsonb NOT NULL CHECK (jsonb_typeof(refunds) = 'array'),
        version          bigint NOT NULL,
        CONSTRAINT scanauth_orders_grant_check CHECK (
          (grant_type = 'time' AND grant_days IS NOT NULL AND grant_points IS NULL)
          OR (grant_type = 'points' AND grant_points IS NOT NULL AND grant_days IS NULL))
      );
      CREATE INDEX scanauth_orders_open ON ${s}.scanauth_orders (status, created_at, out_trade_no);
      CREATE INDEX scanauth_orders_by_user ON ${s}.scanauth_orders (user_id, status, created_at, out_trade_no);
      CREATE INDEX scanauth_orders_by_scene ON ${s}.scanauth_orders (scene_str, status, created_at, out_trade_no);
    `,
  },
  {
    version: 3,
    name: 'confirm on the phone: scene statuses scanned and denied, requested_from, poll_secret_hash, confirmation columns',
    // The scene fields of confirm on the phone (docs/behaviour.md B-confirm-1…12) and of the poll
    // secret (B-secret-1…4). Every column is nullable without a default, so adding it rewrites no
    // row; rows written before read back with the new fields null.
    // - The status CHECK of migration 1 (named by PostgreSQL after table and column) is replaced to
    //   take `denied`; re-adding it checks the rows already there, which all pass the narrower one.
    // - requested_from (B-confirm-5) and poll_secret_hash (B-secret-1): one column each.
    // - The confirmation (B-confirm-1) is four columns, not jsonb: it has one fixed shape, kept whole
    //   by scanauth_scenes_confirmation_check, and confirm_ticket_hash is then both a part of the
    //   record and the column the ticket lookup searches (B-confirm-2, B-confirm-4;
    //   LoadQuery.confirmTicketHash). COLLATE "C" like every string looked up by equality.
    // - scanauth_scenes_by_confirm_ticket_hash is UNIQUE (a ticket names one scene) and partial: most
    //   scenes never get a confirmation, and their NULLs stay out of it. The planner uses it for
    //   `confirm_ticket_hash = $1`, which implies the index's predicate (a strict operator is never
    //   true on NULL; https://www.postgresql.org/docs/current/indexes-partial.html).
    // - scanauth_commit is replaced to write the new columns (commit-function.ts); the released text
    //   of migration 1 stays as it was. Processes of the previous release keep working on the
    //   schema while the fleet is upgraded: their loads name only the old columns, and the new
    //   function keeps the new columns of a scene they update (their drafts lack the keys). Only
    //   `confirm: 'link'` and `requirePollSecret` must wait until every process runs this release:
    //   the old ones know neither `scanned` nor `denied` nor the poll secret.
    sql: (s) => `
      ALTER TABLE ${s}.scanauth_scenes
        DROP CONSTRAINT scanauth_scenes_status_check,
        ADD CONSTRAINT scanauth_scenes_status_check CHECK (status IN ('pending', 'scanned', 'authorized', 'expired', 'denied')),
        ADD COLUMN requested_from text,
        ADD COLUMN poll_secret_hash text,
        ADD COLUMN confirm_scanned_by text,
        ADD COLUMN confirm_scanned_at double precision,
        ADD COLUMN confirm_ticket_hash text COLLATE "C",
        ADD COLUMN confirm_csrf_hash text,
        ADD CONSTRAINT scanauth_scenes_confirmation_check CHECK (
          (confirm_ticket_hash IS NULL AND confirm_scanned_by IS NULL AND confirm_scanned_at IS NULL AND confirm_csrf_hash IS NULL)
          OR (confirm_ticket_hash IS NOT NULL AND confirm_scanned_by IS NOT NULL AND confirm_scanned_at IS NOT NULL));
      CREATE UNIQUE INDEX scanauth_scenes_by_confirm_ticket_hash ON ${s}.scanauth_scenes (confirm_ticket_hash)
        WHERE confirm_ticket_hash IS NOT NULL;

      ${commitFunctionV3Sql(s)}
    `,
  },
  {
    version: 4,
    name: 'closed orders by payment deadline for purgeExpired',
    // purgeExpired now deletes a closed order that never took money once past its payment deadline
    // (docs/behaviour.md, B-order-purge; purge.ts); open, paid and refunded orders stay for good.
    // The index is partial: only closed orders are in it, so the orders kept for good cost it
    // nothing, and a purge batch reads the closed ones in expires_at order up to the cutoff, one
    // range that LIMIT stops. The planner uses it for a statement whose WHERE has
    // `status = 'closed'`, which implies the predicate
    // (https://www.postgresql.org/docs/current/indexes-partial.html). A plain CREATE INDEX, as
    // every step here runs in migrate()'s one transaction (CONCURRENTLY cannot): order writes wait
    // while it reads the orders once; scenes, users and sessions are not touched.
    sql: (s) => `
      CREATE INDEX scanauth_orders_closed_by_expiry ON ${s}.scanauth_orders (expires_at) WHERE status = 'closed';
    `,
  },
  {
    version: 5,
    name: 'orders by time and by user for listOrders',
    // Store.listOrders (operator-reads.ts), the operator's listing of orders of any status, oldest
    // first by (created_at, out_trade_no) after a row-value cursor. Two of its four sets of filters
    // already have an index in that order after their equalities: one status
    // (scanauth_orders_open, which holds every status), one user and one status
    // (scanauth_orders_by_user). These two serve the others, all orders and one user's orders
    // whatever their status, so every page is one index range that LIMIT stops, never a sort of the
    // table or of a user's history. Plain CREATE INDEX, as in migration 4 (every step runs in
    // migrate()'s one transaction): order writes wait while it reads the orders once.
    sql: (s) => `
      CREATE INDEX scanauth_orders_by_time ON ${s}.scanauth_orders (created_at, out_trade_no);
      CREATE INDEX scanauth_orders_by_user_time ON ${s}.scanauth_orders (user_id, created_at, out_trade_no);
    `,
  },
  {
    version: 6,
    name: 'orders: payment channel',
    // OrderRecord.channel (docs/behaviour.md B-phone-1): `native`, a code the device shows, or
    // `jsapi`, WeChat's cashier on the phone. Every order stored before was a Native one, so the
    // DEFAULT is what they read as. A constant default rewrites no row (PostgreSQL 11+ keeps it in
    // the catalog); the CHECK is validated by one read of the orders, under the ACCESS EXCLUSIVE
    // lock ALTER TABLE takes inside migrate()'s transaction, so order reads and writes wait that
    // long. Processes of the previous release keep working while the fleet is upgraded: their
    // insert names the old columns (the order gets the default, `native`, which every order they
    // open is) and their update leaves channel as it is.
    sql: (s) => `
      ALTER TABLE ${s}.scanauth_orders
        ADD COLUMN channel text NOT NULL DEFAULT 'native' CONSTRAINT scanauth_orders_channel_check CHECK (channel IN ('native', 'jsapi'));
    `,
  },
  {
    version: 7,
    name: 'active authorizations by end and by points left, for reminders',
    // Store.listActiveAuthorizations (active-reads.ts), the reminders' read. Both indexes are
    // partial: only `active` authorizations of one type are in them, a few per user at most, so the
    // retired ones (the bulk of a long-lived table) and the queued ones cost them nothing, and the
    // commit function's UPDATE moves a row in or out of them in its own transaction. The planner
    // uses one for a statement whose WHERE has the same `status = 'active' AND type = ...` terms,
    // written as constants, so that a generic plan of the named statement still proves them.
    // - Time: (end_at, id), the order of the answer: a page is one range from its row-value lower
    //   bound (the cursor, or the window's start) to the window's end, which LIMIT stops.
    // - Points: (remaining_points, id): the answer is by id but its condition is a range of
    //   remaining_points, so a page reads the entries of the low range only, never the others
    //   (however many), and then `limit` rows by primary key.
    // Plain CREATE INDEX, as in migrations 4 and 5 (every step runs in migrate()'s one transaction):
    // writes to the authorizations wait while it reads them once.
    sql: (s) => `
      CREATE INDEX scanauth_authorizations_active_time ON ${s}.scanauth_authorizations (end_at, id)
        WHERE status = 'active' AND type = 'time';
      CREATE INDEX scanauth_authorizations_active_points ON ${s}.scanauth_authorizations (remaining_points, id)
        WHERE status = 'active' AND type = 'points';
    `,
  },
]

/** The schema version this release writes and reads. */
export const SCHEMA_VERSION: number = MIGRATIONS[MIGRATIONS.length - 1]?.version ?? 0

/** The name of the version table (inside the store's schema). */
export const VERSION_TABLE = 'scanauth_schema_migrations'

/** What `PostgresStore.migrate()` did: the schema version before and after. */
export interface MigrationOutcome {
  /** The version found. */
  from: number
  /** The version left (always {@link SCHEMA_VERSION}). */
  to: number
}

/**
 * First key of the advisory lock that serializes migrations: a constant of ours ("scan" in ASCII),
 * paired with a hash of the schema name, so that stores on different schemas migrate independently.
 */
const LOCK_CLASS = 0x7363616e

/** `name` as a quoted SQL identifier. Schema names are checked by the options, so this never needs escaping beyond quotes. */
export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`
}

/**
 * Brings the schema up to {@link SCHEMA_VERSION}, or refuses one from a newer release with a
 * {@link PostgresStoreError} `schema_too_new`. Safe when several processes start at once: one
 * transaction takes a transaction-scoped advisory lock (`pg_advisory_xact_lock`) before it reads
 * the version, so one process migrates while the others wait, then find the schema current.
 */
export async function migrate(pool: Pool, schema: string): Promise<MigrationOutcome> {
  const s = quoteIdentifier(schema)
  const client = await pool.connect()
  let failed: unknown = undefined
  try {
    await client.query('BEGIN')
    await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [LOCK_CLASS, schema])
    // Only when missing: CREATE SCHEMA needs the CREATE privilege on the database even with IF NOT
    // EXISTS, which an application role using an existing schema (public) may well lack.
    const exists = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema])
    if (exists.rowCount === 0) await client.query(`CREATE SCHEMA ${s}`)
    await client.query(`CREATE TABLE IF NOT EXISTS ${s}.${VERSION_TABLE} (
      version    integer PRIMARY KEY,
      name       text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`)
    const found = await client.query<{ v: number }>(`SELECT COALESCE(MAX(version), 0)::integer AS v FROM ${s}.${VERSION_TABLE}`)
    const from = found.rows[0]?.v ?? 0
    if (from > SCHEMA_VERSION) {
      throw new PostgresStoreError(
        'schema_too_new',
        `schema ${schema} is at version ${from}, written by a newer @scanauth/postgres; this release knows versions up to ${SCHEMA_VERSION}`,
      )
    }
    for (const step of MIGRATIONS) {
      if (step.version <= from) continue
      await runStep(client, s, step)
    }
    await client.query('COMMIT')
    return { from, to: SCHEMA_VERSION }
  } catch (error) {
    failed = error
    await client.query('ROLLBACK').catch(() => undefined)
    throw error
  } finally {
    // A client whose rollback may not have run is not given back to the pool for reuse.
    client.release(failed instanceof PostgresStoreError || failed === undefined ? undefined : true)
  }
}

/** One step and its version row; a failure becomes `migration_failed` naming the step. */
async function runStep(client: PoolClient, s: string, step: Migration): Promise<void> {
  try {
    await client.query(step.sql(s))
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    throw new PostgresStoreError('migration_failed', `migration ${step.version} (${step.name}) failed: ${reason}`, { cause: error })
  }
  await client.query(`INSERT INTO ${s}.${VERSION_TABLE} (version, name) VALUES ($1, $2)`, [step.version, step.name])
}
