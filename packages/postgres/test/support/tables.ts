/**
 * Every table of a store's schema read with plain SQL into testkit's snapshot shape, never through
 * PostgresStore (the store's own row mapping must not be what checks it). All seven tables are read
 * in one `REPEATABLE READ` transaction, so the snapshot is one moment of the database even while
 * other sessions still commit (a backend finishing the statement of a client that was just killed).
 */
import pg from 'pg'
import type { StoreSnapshot } from '@scanauth/testkit'

type Snapshot = StoreSnapshot
type Order = NonNullable<Snapshot['orders']>[number]
type Row = Record<string, unknown>

/** bigint columns as JavaScript numbers (node-postgres reads int8 as a string); ours never exceed 2^53. */
const NUMBERS = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.INT8 ? Number : pg.types.getTypeParser(oid, format ?? 'text'),
} as pg.CustomTypesConfig

const optionalText = (v: unknown): string | null => (v === null ? null : String(v))

/** Each table, the order its rows are read in, and how one row becomes a record. */
const READERS = {
  scenes: {
    sql: 'SELECT * FROM %s.scanauth_scenes ORDER BY id',
    map: (r: Row): Snapshot['scenes'][number] => ({
      id: r.id as number,
      sceneStr: r.scene_str as string,
      deviceId: r.device_id as string,
      status: r.status as Snapshot['scenes'][number]['status'],
      userId: r.user_id as number | null,
      createdAt: r.created_at as number,
      expiresAt: r.expires_at as number,
      authorizedAt: r.authorized_at as number | null,
      requestedFrom: optionalText(r.requested_from),
      pollSecretHash: optionalText(r.poll_secret_hash),
      confirmation:
        r.confirm_ticket_hash === null
          ? null
          : {
              scannedBy: r.confirm_scanned_by as string,
              scannedAt: r.confirm_scanned_at as number,
              ticketHash: r.confirm_ticket_hash as string,
              csrfHash: optionalText(r.confirm_csrf_hash),
            },
      version: r.version as number,
    }),
  },
  users: {
    sql: 'SELECT * FROM %s.scanauth_users ORDER BY id',
    map: (r: Row): Snapshot['users'][number] => ({
      id: r.id as number,
      openid: r.openid as string,
      createdAt: r.created_at as number,
      lastSeenAt: r.last_seen_at as number,
      hasClaimedFree: r.has_claimed_free as boolean,
      version: r.version as number,
    }),
  },
  authorizations: {
    sql: 'SELECT * FROM %s.scanauth_authorizations ORDER BY id',
    map: (r: Row): Snapshot['authorizations'][number] => ({
      id: r.id as number,
      userId: r.user_id as number,
      type: r.type as Snapshot['authorizations'][number]['type'],
      status: r.status as Snapshot['authorizations'][number]['status'],
      startAt: r.start_at as number,
      endAt: r.end_at as number | null,
      remainingPoints: r.remaining_points as number,
      totalPoints: r.total_points as number,
      source: r.source as string,
      createdAt: r.created_at as number,
      updatedAt: r.updated_at as number,
    }),
  },
  sessions: {
    sql: 'SELECT * FROM %s.scanauth_sessions ORDER BY id',
    map: (r: Row): Snapshot['sessions'][number] => ({
      id: r.id as number,
      token: r.token as string,
      userId: r.user_id as number,
      deviceId: r.device_id as string,
      sceneId: r.scene_id as number,
      createdAt: r.created_at as number,
      expiresAt: r.expires_at as number,
    }),
  },
  ledger: {
    sql: 'SELECT * FROM %s.scanauth_ledger ORDER BY id',
    map: (r: Row): Snapshot['ledger'][number] => ({
      id: r.id as number,
      userId: r.user_id as number,
      authorizationId: r.authorization_id as number,
      kind: r.kind as Snapshot['ledger'][number]['kind'],
      points: r.points as number,
      remainingPoints: r.remaining_points as number,
      at: r.at as number,
      source: optionalText(r.source),
      idempotencyKey: optionalText(r.idempotency_key),
      reason: optionalText(r.reason),
    }),
  },
  idempotency: {
    sql: 'SELECT * FROM %s.scanauth_idempotency ORDER BY key',
    map: (r: Row): Snapshot['idempotency'][number] => ({
      key: r.key as string,
      fingerprint: r.fingerprint as string,
      authorizationId: r.authorization_id as number | null,
      result: optionalText(r.result),
      createdAt: r.created_at as number,
    }),
  },
  orders: {
    sql: 'SELECT * FROM %s.scanauth_orders ORDER BY out_trade_no',
    map: (r: Row): Order => ({
      outTradeNo: r.out_trade_no as string,
      userId: r.user_id as number,
      planId: r.plan_id as string,
      description: r.description as string,
      amountFen: r.amount_fen as number,
      grant: r.grant_type === 'time' ? { type: 'time', days: r.grant_days as number } : { type: 'points', points: r.grant_points as number },
      sceneStr: optionalText(r.scene_str),
      // A schema not yet at version 6 has no channel column: its orders are Native ones.
      channel: (r.channel ?? 'native') as Order['channel'],
      status: r.status as Order['status'],
      createdAt: r.created_at as number,
      expiresAt: r.expires_at as number,
      updatedAt: r.updated_at as number,
      paidAt: r.paid_at as number | null,
      transactionId: optionalText(r.transaction_id),
      authorizationId: r.authorization_id as number | null,
      refundedFen: r.refunded_fen as number,
      refunds: r.refunds as Order['refunds'],
      version: r.version as number,
    }),
  },
} as const

/** Every record of the store's tables in `schema`, as of one moment. */
export async function readTables(pool: pg.Pool, schema: string): Promise<StoreSnapshot> {
  const quoted = `"${schema}"`
  const client = await pool.connect()
  let failed = false
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY')
    const read = async <T>(reader: { sql: string; map: (r: Row) => T }): Promise<T[]> =>
      (await client.query<Row>({ text: reader.sql.replace('%s', quoted), types: NUMBERS })).rows.map(reader.map)
    const snapshot: StoreSnapshot = {
      scenes: await read(READERS.scenes),
      users: await read(READERS.users),
      authorizations: await read(READERS.authorizations),
      sessions: await read(READERS.sessions),
      ledger: await read(READERS.ledger),
      idempotency: await read(READERS.idempotency),
      orders: await read(READERS.orders),
    }
    await client.query('COMMIT')
    return snapshot
  } catch (error) {
    failed = true
    throw error
  } finally {
    // A client left inside a failed transaction is not handed back for reuse.
    client.release(failed)
  }
}
