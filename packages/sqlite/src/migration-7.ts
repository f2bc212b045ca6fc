/**
 * Migration 7, in a module of its own so that `schema.ts` stays readable: the scene columns of
 * confirm on the phone (docs/behaviour.md B-confirm-1…12) and of the poll secret (B-secret-1…4).
 *
 * @module
 */
import type { Migration } from './migration'

/**
 * Rebuilds `scanauth_scenes` with the statuses `scanned` and `denied` and six nullable columns.
 *
 * - `requested_from` (B-confirm-5) and `poll_secret_hash` (B-secret-1): one column each.
 * - The confirmation (B-confirm-1) is four columns, not JSON: it has one fixed shape, its CHECK
 *   keeps it whole (all four null, or the three required ones set), a load maps columns without
 *   parsing anything, and `confirm_ticket_hash` is then both a part of the record and the column
 *   the ticket lookup (B-confirm-2, B-confirm-4; `LoadQuery.confirmTicketHash`) searches.
 * - `scanauth_scenes_by_confirm_ticket_hash` is UNIQUE (a ticket names one scene) and partial
 *   (most scenes never have a confirmation, so their NULLs stay out of it). SQLite uses it for
 *   `confirm_ticket_hash = ?`, which implies the index's `IS NOT NULL`
 *   (https://sqlite.org/partialindex.html, "Queries Using Partial Indexes").
 *
 * SQLite cannot change a CHECK constraint in place (`denied` is a new status), so the table is
 * rebuilt as migration 3 rebuilt `scanauth_authorizations`
 * (https://sqlite.org/lang_altertable.html#otheralter; migrate() runs it with foreign keys off and
 * legacy_alter_table on): create, copy every row with its id, carry over the AUTOINCREMENT
 * high-water mark (a scene id is never reused), drop, rename, recreate both indexes. Rows written
 * before the upgrade get NULL in the new columns, which the store reads as null fields.
 * Nothing of ours references `scanauth_scenes` (sessions, orders and the change log name a scene
 * by value, not by foreign key), so no other table needs rebuilding.
 */
export const MIGRATION_7: Migration = {
  version: 7,
  name: 'confirm on the phone: scene statuses scanned and denied, requested_from, poll_secret_hash, confirmation columns',
  sql: `
    CREATE TABLE scanauth_scenes_v7 (
      id                  INTEGER PRIMARY KEY AUTOINCREMENT,
      scene_str           TEXT    NOT NULL,
      device_id           TEXT    NOT NULL,
      status              TEXT    NOT NULL CHECK (status IN ('pending', 'scanned', 'authorized', 'expired', 'denied')),
      user_id             INTEGER REFERENCES scanauth_users (id),
      created_at          INTEGER NOT NULL,
      expires_at          INTEGER NOT NULL,
      authorized_at       INTEGER,
      version             INTEGER NOT NULL,
      requested_from      TEXT,
      poll_secret_hash    TEXT,
      confirm_scanned_by  TEXT,
      confirm_scanned_at  INTEGER,
      confirm_ticket_hash TEXT,
      confirm_csrf_hash   TEXT,
      CHECK ((confirm_ticket_hash IS NULL AND confirm_scanned_by IS NULL AND confirm_scanned_at IS NULL AND confirm_csrf_hash IS NULL)
          OR (confirm_ticket_hash IS NOT NULL AND confirm_scanned_by IS NOT NULL AND confirm_scanned_at IS NOT NULL))
    );
    INSERT INTO scanauth_scenes_v7 (id, scene_str, device_id, status, user_id, created_at, expires_at, authorized_at, version)
      SELECT id, scene_str, device_id, status, user_id, created_at, expires_at, authorized_at, version
      FROM scanauth_scenes ORDER BY id;
    DELETE FROM sqlite_sequence WHERE name = 'scanauth_scenes_v7';
    INSERT INTO sqlite_sequence (name, seq)
      SELECT 'scanauth_scenes_v7', seq FROM sqlite_sequence WHERE name = 'scanauth_scenes';
    DROP TABLE scanauth_scenes;
    ALTER TABLE scanauth_scenes_v7 RENAME TO scanauth_scenes;
    CREATE UNIQUE INDEX scanauth_scenes_by_scene_str ON scanauth_scenes (scene_str);
    CREATE INDEX scanauth_scenes_by_expiry ON scanauth_scenes (expires_at);
    CREATE UNIQUE INDEX scanauth_scenes_by_confirm_ticket_hash ON scanauth_scenes (confirm_ticket_hash)
      WHERE confirm_ticket_hash IS NOT NULL;
  `,
}
