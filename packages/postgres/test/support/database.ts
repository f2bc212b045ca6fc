/**
 * Test plumbing: pools on the test server (`DATABASE_URL`, default
 * postgres://postgres@127.0.0.1:5432/test), a fresh schema per harness, dropped afterwards, and
 * every table read with raw SQL, never through PostgresStore (its own mapping must not check itself).
 */
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import type { StoreSnapshot } from '@scanauth/testkit'

/** The server the tests use. */
export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

/** A new pool on the test server. */
export function openPool(max = 10): pg.Pool {
  return new pg.Pool({ connectionString: DATABASE_URL, max })
}

/** A schema name of our own: `scanauth_test_` and 12 random hex characters. */
export function freshSchemaName(): string {
  return `scanauth_test_${randomBytes(6).toString('hex')}`
}

/** Drops a schema and everything in it. */
export async function dropSchema(pool: pg.Pool, schema: string): Promise<void> {
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
}

/** Every record in the schema, read with plain SELECTs and mapped here by hand. */
export async function dumpSchema(pool: pg.Pool, schema: string): Promise<StoreSnapshot> {
  type Row = Record<string, unknown>
  const all = async (table: string, order: string) => (await pool.query<Row>(`SELECT * FROM "${schema}".${table} ORDER BY ${order}`)).rows
  // bigint columns arrive as strings, double precision as numbers.
  const num = (v: unknown) => Number(v)
  const opt = (v: unknown) => (v === null ? null : Number(v))
  const str = (v: unknown) => v as string
  const optStr = (v: unknown) => (v === null ? null : (v as string))
  type Snapshot = StoreSnapshot
  return {
    scenes: (await all('scanauth_scenes', 'id')).map((r) => ({
      id: num(r.id),
      sceneStr: str(r.scene_str),
      deviceId: str(r.device_id),
      status: str(r.status) as Snapshot['scenes'][number]['status'],
      userId: opt(r.user_id),
      createdAt: num(r.created_at),
      expiresAt: num(r.expires_at),
      authorizedAt: opt(r.authorized_at),
      version: num(r.version),
    })),
    users: (await all('scanauth_users', 'id')).map((r) => ({
      id: num(r.id),
      openid: str(r.openid),
      createdAt: num(r.created_at),
      lastSeenAt: num(r.last_seen_at),
      hasClaimedFree: r.has_claimed_free === true,
      version: num(r.version),
    })),
    authorizations: (await all('scanauth_authorizations', 'id')).map((r) => ({
      id: num(r.id),
      userId: num(r.user_id),
      type: str(r.type) as 'time' | 'points',
      status: str(r.status) as Snapshot['authorizations'][number]['status'],
      startAt: num(r.start_at),
      endAt: opt(r.end_at),
      remainingPoints: num(r.remaining_points),
      totalPoints: num(r.total_points),
      source: str(r.source),
      createdAt: num(r.created_at),
      updatedAt: num(r.updated_at),
    })),
    sessions: (await all('scanauth_sessions', 'id')).map((r) => ({
      id: num(r.id),
      token: str(r.token),
      userId: num(r.user_id),
      deviceId: str(r.device_id),
      sceneId: num(r.scene_id),
      createdAt: num(r.created_at),
      expiresAt: num(r.expires_at),
    })),
    ledger: (await all('scanauth_ledger', 'id')).map((r) => ({
      id: num(r.id),
      userId: num(r.user_id),
      authorizationId: num(r.authorization_id),
      kind: str(r.kind) as Snapshot['ledger'][number]['kind'],
      points: num(r.points),
      remainingPoints: num(r.remaining_points),
      at: num(r.at),
      source: optStr(r.source),
      idempotencyKey: optStr(r.idempotency_key),
      reason: optStr(r.reason),
    })),
    idempotency: (await all('scanauth_idempotency', 'key')).map((r) => ({
      key: str(r.key),
      fingerprint: str(r.fingerprint),
      authorizationId: opt(r.authorization_id),
      result: optStr(r.result),
      createdAt: num(r.created_at),
    })),
  }
}
