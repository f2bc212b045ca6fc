/**
 * Records ⇄ Redis values. Each record is one packed string of `|`-separated fields in a fixed
 * order: compact (a pending scene is one short string, read with one GET), and cheap to decode.
 * Whatever a key name already says (a scene's scene_str, a user's id, a session's token) is not
 * repeated in the value. The one free-text field of a record (device_id, openid, source) comes
 * last, so it may itself contain `|`.
 *
 * Numbers are written with `String(n)` and read with `Number(s)`, which round-trips every finite
 * double exactly (timestamps are integers in practice, but a fractional lifetime is allowed).
 * `null` is the empty field.
 *
 * | record        | value                                                                                   |
 * |---------------|-----------------------------------------------------------------------------------------|
 * | scene         | `version\|id\|userId\|status\|createdAt\|expiresAt\|authorizedAt\|deviceId` (compact form; `codec-scenes.ts`) |
 * | user          | `version\|createdAt\|lastSeenAt\|hasClaimedFree(0/1)\|openid`                            |
 * | authorization | `userId\|status\|type\|startAt\|endAt\|remainingPoints\|totalPoints\|createdAt\|updatedAt\|source` |
 * | session       | `id\|userId\|sceneId\|createdAt\|expiresAt\|deviceId`                                    |
 *
 * The version comes first in scenes and users because the commit script compares it (it reads the
 * field before the first `|`); the script also fills in ids and user ids, so those come before the
 * part built here (the "tail"). An authorization's id is its field name in the `<p>a` hash.
 * Scenes, which also have an extended form for the confirm-on-the-phone fields, are in
 * `codec-scenes.ts`; ledger entries and idempotency records in `codec-entitlements.ts`.
 *
 * @module
 */
import { type AuthorizationRecord, type AuthorizationStatus, type AuthorizationType, type SessionRecord, type UserRecord } from '@scanauth/core'
import { fifoOrder, type NewAuthorization } from '@scanauth/core/store'
import { RedisStoreError } from './errors'

/** The field separator. */
export const SEP = '|'

const AUTH_STATUS = { pending: 'p', active: 'a', expired: 'e', exhausted: 'x', revoked: 'r' } as const satisfies Record<AuthorizationStatus, string>
const AUTH_TYPE = { time: 't', points: 'p' } as const satisfies Record<AuthorizationType, string>

const invert = <K extends string>(map: Record<K, string>): Map<string, K> =>
  new Map(Object.entries(map).map(([k, v]) => [v as string, k as K]))
const AUTH_STATUS_OF = invert(AUTH_STATUS)
const AUTH_TYPE_OF = invert(AUTH_TYPE)

/**
 * The error for a stored value that cannot be decoded: the key holds something this store did not
 * write. The value is quoted up to 80 characters, enough to recognise it in a log.
 */
export function malformed(kind: string, value: string): RedisStoreError {
  return new RedisStoreError('malformed_record', `malformed ${kind} record ${JSON.stringify(value.slice(0, 80))}`)
}

// ---- users --------------------------------------------------------------------------------------

export function encodeUser(user: Omit<UserRecord, 'id'>): string {
  return [num(user.version), num(user.createdAt), num(user.lastSeenAt), user.hasClaimedFree ? '1' : '0', user.openid].join(SEP)
}

export function decodeUser(id: number, value: string): UserRecord {
  const f = fields(value, 5, 'user')
  if (f[3] !== '0' && f[3] !== '1') throw malformed('user', value)
  return {
    id,
    openid: f[4] as string,
    createdAt: readNum(f[1], 'user', value),
    lastSeenAt: readNum(f[2], 'user', value),
    hasClaimedFree: f[3] === '1',
    version: readNum(f[0], 'user', value),
  }
}

// ---- authorizations -----------------------------------------------------------------------------

/** Where the commit script files an authorization: see {@link authorizationFiling}. */
export type AuthorizationIndex = 'e' | 'p' | 'a' | 'q' | '-'

/**
 * Which indexes an authorization is filed in, by its status and type, and its score there, so that
 * the commit script files it without decoding the record:
 *
 * - `e`: an `active` time one: its user's active set and `<p>ae`, scored by its `endAt`;
 * - `p`: an `active` points one: its user's active set and `<p>ap`, scored by its `remainingPoints`;
 * - `a`: an `active` time one without an `endAt` (core never writes one): the active set alone;
 * - `q`: a `pending` one: its user's queue, scored by its `createdAt`;
 * - `-`: a retired one (expired, exhausted, revoked): none; it is only in the `<p>a` hash.
 *
 * The score of `a` and `-` is sent but not used.
 */
export function authorizationFiling(a: Pick<NewAuthorization, 'status' | 'type' | 'endAt' | 'remainingPoints' | 'createdAt'>): [AuthorizationIndex, string] {
  if (a.status === 'pending') return ['q', num(a.createdAt)]
  if (a.status !== 'active') return ['-', '0']
  if (a.type === 'points') return ['p', num(a.remainingPoints)]
  return a.endAt === null ? ['a', '0'] : ['e', num(a.endAt)]
}

/** The authorization fields after `userId|` (the commit script writes the user id). */
export function authorizationTail(a: NewAuthorization): string {
  return [
    AUTH_STATUS[a.status],
    AUTH_TYPE[a.type],
    num(a.startAt),
    optNum(a.endAt),
    num(a.remainingPoints),
    num(a.totalPoints),
    num(a.createdAt),
    num(a.updatedAt),
    a.source,
  ].join(SEP)
}

/** A whole authorization value, as the `<p>a` hash holds it under the authorization's id. */
export function encodeAuthorization(a: AuthorizationRecord): string {
  return `${num(a.userId)}${SEP}${authorizationTail(a)}`
}

export function decodeAuthorization(id: number, value: string): AuthorizationRecord {
  const f = fields(value, 10, 'authorization')
  return {
    id,
    userId: readNum(f[0], 'authorization', value),
    type: readCode(AUTH_TYPE_OF, f[2], 'authorization', value),
    status: readCode(AUTH_STATUS_OF, f[1], 'authorization', value),
    startAt: readNum(f[3], 'authorization', value),
    endAt: readOptNum(f[4], 'authorization', value),
    remainingPoints: readNum(f[5], 'authorization', value),
    totalPoints: readNum(f[6], 'authorization', value),
    source: f[9] as string,
    createdAt: readNum(f[7], 'authorization', value),
    updatedAt: readNum(f[8], 'authorization', value),
  }
}

/** Authorizations from a flat `[id, value, id, value, ...]` reply, in activation order (createdAt, then id). */
export function decodeAuthorizationList(flat: readonly string[]): AuthorizationRecord[] {
  const list: AuthorizationRecord[] = []
  for (let i = 0; i + 1 < flat.length; i += 2) {
    list.push(decodeAuthorization(readNum(flat[i], 'authorization id', String(flat[i])), flat[i + 1] as string))
  }
  return list.sort(fifoOrder)
}

// ---- sessions -----------------------------------------------------------------------------------

/** The session fields after `id|userId|sceneId` (the commit script writes those). */
export function sessionTail(session: Pick<SessionRecord, 'createdAt' | 'expiresAt' | 'deviceId'>): string {
  return [num(session.createdAt), num(session.expiresAt), session.deviceId].join(SEP)
}

export function encodeSession(session: SessionRecord): string {
  return [num(session.id), num(session.userId), num(session.sceneId), sessionTail(session)].join(SEP)
}

export function decodeSession(token: string, value: string): SessionRecord {
  const f = fields(value, 6, 'session')
  return {
    id: readNum(f[0], 'session', value),
    token,
    userId: readNum(f[1], 'session', value),
    deviceId: f[5] as string,
    sceneId: readNum(f[2], 'session', value),
    createdAt: readNum(f[3], 'session', value),
    expiresAt: readNum(f[4], 'session', value),
  }
}

// ---- fields -------------------------------------------------------------------------------------

/** A number as a field. */
export function num(n: number): string {
  return String(n)
}

/** A nullable number as a field (`null` is the empty field). */
export function optNum(n: number | null): string {
  return n === null ? '' : String(n)
}

/**
 * Splits `value` into exactly `count` fields; the last one keeps any further separators (it is the
 * free-text field). `String.prototype.split` with a limit would drop that remainder, so split
 * fully (fast, native) and join the tail back when it held separators.
 */
export function fields(value: string, count: number, kind: string): string[] {
  return splitFields(value.split(SEP), count, kind, value)
}

/**
 * {@link fields} for a value already split at every separator (`parts`, changed in place): a
 * decoder that must look at a field before it knows the count (a scene's form) splits only once.
 */
export function splitFields(parts: string[], count: number, kind: string, value: string): string[] {
  if (parts.length < count) throw malformed(kind, value)
  if (parts.length > count) parts.push(parts.splice(count - 1).join(SEP))
  return parts
}

/** A required number field, or a {@link MalformedRecordError}. */
export function readNum(field: string | undefined, kind: string, value: string): number {
  const n = field === undefined || field === '' ? Number.NaN : Number(field)
  if (!Number.isFinite(n)) throw malformed(kind, value)
  return n
}

/** A nullable number field, or a {@link MalformedRecordError}. */
export function readOptNum(field: string | undefined, kind: string, value: string): number | null {
  return field === '' ? null : readNum(field, kind, value)
}

function readCode<T>(map: Map<string, T>, field: string | undefined, kind: string, value: string): T {
  const found = field === undefined ? undefined : map.get(field)
  if (found === undefined) throw malformed(kind, value)
  return found
}
