/**
 * A version 2 file as `@scanauth/sqlite` 0.1.0 wrote it (migrations 1 and 2, copied here by hand
 * so that the upgrade tests do not depend on `MIGRATIONS`), and the data the upgrade tests put in it.
 */
import { VERSION_TABLE } from '@scanauth/sqlite'

/** The schema of a 0.1.0 file: tables, lookup indexes, expiry indexes, and its version rows. */
export const V2_SCHEMA = `
  CREATE TABLE ${VERSION_TABLE} (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL);
  INSERT INTO ${VERSION_TABLE} VALUES (1, 'tables and lookup indexes', 0), (2, 'expiry indexes for purgeExpired', 0);
  CREATE TABLE scanauth_users (
    id INTEGER PRIMARY KEY AUTOINCREMENT, openid TEXT NOT NULL, created_at INTEGER NOT NULL, last_seen_at INTEGER NOT NULL,
    has_claimed_free INTEGER NOT NULL CHECK (has_claimed_free IN (0, 1)), version INTEGER NOT NULL);
  CREATE UNIQUE INDEX scanauth_users_by_openid ON scanauth_users (openid);
  CREATE TABLE scanauth_scenes (
    id INTEGER PRIMARY KEY AUTOINCREMENT, scene_str TEXT NOT NULL, device_id TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'scanned', 'authorized', 'expired')),
    user_id INTEGER REFERENCES scanauth_users (id), created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL,
    authorized_at INTEGER, version INTEGER NOT NULL);
  CREATE UNIQUE INDEX scanauth_scenes_by_scene_str ON scanauth_scenes (scene_str);
  CREATE TABLE scanauth_authorizations (
    id INTEGER PRIMARY KEY AUTOINCREMENT, user_id INTEGER NOT NULL REFERENCES scanauth_users (id),
    type TEXT NOT NULL CHECK (type IN ('time', 'points')),
    status TEXT NOT NULL CHECK (status IN ('pending', 'active', 'expired', 'exhausted')),
    start_at INTEGER NOT NULL, end_at INTEGER, remaining_points INTEGER NOT NULL CHECK (remaining_points >= 0),
    total_points INTEGER NOT NULL, source TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
  CREATE INDEX scanauth_authorizations_by_user ON scanauth_authorizations (user_id, status, created_at, id);
  CREATE TABLE scanauth_sessions (
    id INTEGER PRIMARY KEY AUTOINCREMENT, token TEXT NOT NULL, user_id INTEGER NOT NULL REFERENCES scanauth_users (id),
    device_id TEXT NOT NULL, scene_id INTEGER NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL);
  CREATE UNIQUE INDEX scanauth_sessions_by_token ON scanauth_sessions (token);
  CREATE INDEX scanauth_sessions_by_scene ON scanauth_sessions (scene_id, id);
  CREATE INDEX scanauth_scenes_by_expiry ON scanauth_scenes (expires_at);
  CREATE INDEX scanauth_sessions_by_expiry ON scanauth_sessions (expires_at);
`

/** Far in the future, so nothing below expires during a test. */
export const LATER = 9_000_000_000_000

/**
 * Two users: `o-old` scanned once (its free trial expired), spent 3 of 10 points on an active
 * authorization and has 5 more queued; `o-spent` used up 4 points. The authorizations'
 * AUTOINCREMENT mark is 9, above the highest id (rows 5–9 existed once and were deleted by hand):
 * ids are never reused, so the next one must be 10.
 */
export const V2_DATA = `
  INSERT INTO scanauth_users VALUES (1, 'o-old', 10, 20, 1, 7), (2, 'o-spent', 30, 30, 0, 3);
  INSERT INTO scanauth_authorizations VALUES
    (1, 1, 'time', 'expired', 10, 100, 0, 0, 'free', 10, 100),
    (2, 1, 'points', 'active', 15, NULL, 7, 10, 'purchase', 15, 120),
    (3, 1, 'points', 'pending', 16, NULL, 5, 5, 'purchase', 16, 16),
    (4, 2, 'points', 'exhausted', 30, NULL, 0, 4, 'admin', 30, 50);
  UPDATE sqlite_sequence SET seq = 9 WHERE name = 'scanauth_authorizations';
  INSERT INTO scanauth_scenes VALUES (1, 'pc_00000000000000000000000000000001', 'dev', 'authorized', 1, 10, ${LATER}, 10, 2);
  INSERT INTO scanauth_sessions VALUES (1, 'tok-old', 1, 'dev', 1, 10, ${LATER});
`
