/**
 * Test plumbing: a fresh temporary folder per test, and every table read with raw SQL through a
 * connection of its own, never through SqliteStore (its own mapping must not check itself).
 */
import Database from 'better-sqlite3'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { StoreSnapshot } from '@scanauth/testkit'

/** A temporary folder with a database path in it; `remove()` deletes the folder. */
export interface TempDb {
  dir: string
  filename: string
  remove(): Promise<void>
}

/** Makes a fresh folder under the system temp dir. */
export async function tempDb(name = 'scanauth.db'): Promise<TempDb> {
  const dir = await mkdtemp(join(tmpdir(), 'scanauth-sqlite-'))
  return { dir, filename: join(dir, name), remove: () => rm(dir, { recursive: true, force: true }) }
}

/** Every record in the file, read with plain SELECTs and mapped here by hand. */
export function dumpTables(db: Database.Database): StoreSnapshot {
  type Row = Record<string, number | string | null>
  const all = (sql: string) => db.prepare(sql).all() as Row[]
  const num = (v: unknown) => v as number
  const str = (v: unknown) => v as string
  const opt = (v: unknown) => (v === null ? null : (v as number))
  const optStr = (v: unknown) => (v === null ? null : (v as string))
  return {
    scenes: all('SELECT * FROM scanauth_scenes ORDER BY id').map((r) => ({
      id: num(r.id),
      sceneStr: str(r.scene_str),
      deviceId: str(r.device_id),
      status: str(r.status) as StoreSnapshot['scenes'][number]['status'],
      userId: opt(r.user_id),
      createdAt: num(r.created_at),
      expiresAt: num(r.expires_at),
      authorizedAt: opt(r.authorized_at),
      requestedFrom: optStr(r.requested_from),
      pollSecretHash: optStr(r.poll_secret_hash),
      confirmation:
        r.confirm_ticket_hash === null
          ? null
          : { scannedBy: str(r.confirm_scanned_by), scannedAt: num(r.confirm_scanned_at), ticketHash: str(r.confirm_ticket_hash), csrfHash: optStr(r.confirm_csrf_hash) },
      version: num(r.version),
    })),
    users: all('SELECT * FROM scanauth_users ORDER BY id').map((r) => ({
      id: num(r.id),
      openid: str(r.openid),
      createdAt: num(r.created_at),
      lastSeenAt: num(r.last_seen_at),
      hasClaimedFree: r.has_claimed_free === 1,
      version: num(r.version),
    })),
    authorizations: all('SELECT * FROM scanauth_authorizations ORDER BY id').map((r) => ({
      id: num(r.id),
      userId: num(r.user_id),
      type: str(r.type) as 'time' | 'points',
      status: str(r.status) as StoreSnapshot['authorizations'][number]['status'],
      startAt: num(r.start_at),
      endAt: opt(r.end_at),
      remainingPoints: num(r.remaining_points),
      totalPoints: num(r.total_points),
      source: str(r.source),
      createdAt: num(r.created_at),
      updatedAt: num(r.updated_at),
    })),
    sessions: all('SELECT * FROM scanauth_sessions ORDER BY id').map((r) => ({
      id: num(r.id),
      token: str(r.token),
      userId: num(r.user_id),
      deviceId: str(r.device_id),
      sceneId: num(r.scene_id),
      createdAt: num(r.created_at),
      expiresAt: num(r.expires_at),
    })),
    ledger: all('SELECT * FROM scanauth_ledger ORDER BY id').map((r) => ({
      id: num(r.id),
      userId: num(r.user_id),
      authorizationId: num(r.authorization_id),
      kind: str(r.kind) as StoreSnapshot['ledger'][number]['kind'],
      points: num(r.points),
      remainingPoints: num(r.remaining_points),
      at: num(r.at),
      source: r.source === null ? null : str(r.source),
      idempotencyKey: r.idempotency_key === null ? null : str(r.idempotency_key),
      reason: r.reason === null ? null : str(r.reason),
    })),
    idempotency: all('SELECT * FROM scanauth_idempotency ORDER BY key').map((r) => ({
      key: str(r.key),
      fingerprint: str(r.fingerprint),
      authorizationId: opt(r.authorization_id),
      result: r.result === null ? null : str(r.result),
      createdAt: num(r.created_at),
    })),
    // A file not yet migrated to version 6 has no orders table: it holds no orders.
    orders: (hasTable(db, 'scanauth_orders') ? all('SELECT * FROM scanauth_orders ORDER BY out_trade_no') : []).map((r) => ({
      outTradeNo: str(r.out_trade_no),
      userId: num(r.user_id),
      planId: str(r.plan_id),
      description: str(r.description),
      amountFen: num(r.amount_fen),
      grant: r.grant_type === 'time' ? { type: 'time' as const, days: num(r.grant_days) } : { type: 'points' as const, points: num(r.grant_points) },
      sceneStr: r.scene_str === null ? null : str(r.scene_str),
      // A file not yet migrated to version 10 has no channel column: its orders are Native ones.
      channel: (r.channel === undefined ? 'native' : str(r.channel)) as NonNullable<StoreSnapshot['orders']>[number]['channel'],
      status: str(r.status) as NonNullable<StoreSnapshot['orders']>[number]['status'],
      createdAt: num(r.created_at),
      expiresAt: num(r.expires_at),
      updatedAt: num(r.updated_at),
      paidAt: opt(r.paid_at),
      transactionId: r.transaction_id === null ? null : str(r.transaction_id),
      authorizationId: opt(r.authorization_id),
      refundedFen: num(r.refunded_fen),
      refunds: JSON.parse(str(r.refunds)) as NonNullable<StoreSnapshot['orders']>[number]['refunds'],
      version: num(r.version),
    })),
  }
}

/** Whether the file has a table of this name. */
function hasTable(db: Database.Database, name: string): boolean {
  return db.prepare(`SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?`).get(name) !== undefined
}

/** Opens the file read-only in a connection of its own, dumps it, and closes it. */
export function dumpFile(filename: string): StoreSnapshot {
  const db = new Database(filename, { readonly: true })
  try {
    return dumpTables(db)
  } finally {
    db.close()
  }
}
