/**
 * Migrations 10 and 11, in a module of their own so that `schema.ts` stays readable: the order's
 * payment channel (paying on the phone, docs/behaviour.md B-phone-1) and the reminders' indexes of
 * active authorizations (B-remind-2).
 *
 * @module
 */
import type { Migration } from './migration'

/** Migrations 10 and 11, in order. */
export const MIGRATIONS_10_11: readonly Migration[] = [
  {
    version: 10,
    name: 'orders: payment channel',
    // OrderRecord.channel (docs/behaviour.md B-phone-1): `native`, a code the device shows, or
    // `jsapi`, WeChat's cashier on the phone. Every order stored before was a Native one, so the
    // DEFAULT is what they read as. A plain ADD COLUMN, no rebuild as in migrations 3 and 7: no
    // existing CHECK changes, and SQLite keeps a constant default in the schema, so no row is
    // rewritten; the new column's CHECK is tested against the rows there
    // (https://sqlite.org/lang_altertable.html#altertabaddcol), which all hold the default.
    sql: `
      ALTER TABLE scanauth_orders ADD COLUMN channel TEXT NOT NULL DEFAULT 'native' CHECK (channel IN ('native', 'jsapi'));
    `,
  },
  {
    version: 11,
    name: 'active authorizations by end and by points left, for reminders',
    // Store.listActiveAuthorizations (active-reads.ts), the reminders' read. Both indexes are partial:
    // only `active` authorizations of one type are in them, a few per user at most, so the retired
    // ones (the bulk of a long-lived table) and the queued ones cost them nothing, and a commit
    // moves an authorization in or out of them in the same transaction as its status. SQLite uses
    // one for a statement whose WHERE has the same `status = 'active' AND type = ...` terms
    // (https://sqlite.org/partialindex.html).
    // - Time: (end_at, id) is the order of the answer, so a page is one range from its row-value
    //   lower bound (the cursor, or the window's start) to the window's end, which LIMIT stops.
    // - Points: (remaining_points, id). The answer is by id, but its condition is a range of
    //   remaining_points: a page reads the index entries of that range (the low ones only, never
    //   the others, however many), keeps those after the cursor, and sorts their ids; then reads
    //   `limit` rows. An index on id alone would walk every active points authorization to find
    //   the few low ones.
    // Creating them reads the authorizations once, inside migrate()'s transaction; no row changes.
    sql: `
      CREATE INDEX scanauth_authorizations_active_time ON scanauth_authorizations (end_at, id)
        WHERE status = 'active' AND type = 'time';
      CREATE INDEX scanauth_authorizations_active_points ON scanauth_authorizations (remaining_points, id)
        WHERE status = 'active' AND type = 'points';
    `,
  },
]
