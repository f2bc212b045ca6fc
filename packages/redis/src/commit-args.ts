/**
 * A {@link ChangeSet} as the commit script's arguments, and the script's reply as a
 * {@link CommitResult}. The argument order is the one `scripts/commit.ts` documents and reads.
 *
 * TTLs are chosen here (see `expiry.ts`): this is the only place that turns record times into
 * key lifetimes.
 *
 * @module
 */
import { type SceneRecord } from '@scanauth/core'
import { NEW_USER, sceneNeededUntil, type AssignedIds, type AuthorizationRef, type ChangeSet, type CommitResult, type NewAuthorization, type UserRef } from '@scanauth/core/store'
import { authorizationFiling, authorizationTail, encodeUser, num, sessionTail } from './codec'
import { sceneTail } from './codec-scenes'
import { idempotencyTail, ledgerTail } from './codec-entitlements'
import { describeReply, RedisStoreError } from './errors'
import { KEEP_TTL, relativeTtl } from './expiry'

/** What the arguments depend on besides the change set. */
export interface CommitArgsContext {
  prefix: string
  /** '' when receipts are off. */
  receiptId: string
  receiptTtlMs: number
  graceMs: number
}

/** The ARGV of the commit script for `changes`. */
export function commitArgs(changes: ChangeSet, ctx: CommitArgsContext): string[] {
  const { scene, user, session, ledger, idempotency } = changes
  const insertsUser = user?.op === 'insert'
  const inserted = user?.insertAuthorizations.length ?? 0
  const args = [ctx.prefix, ctx.receiptId, num(ctx.receiptTtlMs)]

  // Only the parts the change set has, each behind its tag ('s', 'u', 't', 'l', 'i').
  // Each scene section ends with the confirm ticket's digest ('' = no confirmation): the script
  // files the scene under it (`<p>ct:`, B-confirm-6) without decoding the tail.
  if (scene?.op === 'insert') {
    const s = scene.scene
    const ttl = relativeTtl(s.expiresAt, s.createdAt, ctx.graceMs)
    args.push('s', 'i', s.sceneStr, '', num(s.version), '', userRef(s.userId, insertsUser), sceneTail(s), ttl, ticketOf(s))
  } else if (scene?.op === 'update') {
    const s = scene.scene
    // A scene written with its session is needed as long as that session lives (core's retention
    // rule, docs/behaviour.md D-retention); any other update (expiry, a status change) keeps the
    // deadline it has.
    const ttl = session ? relativeTtl(sceneNeededUntil(s, session), session.createdAt, ctx.graceMs) : KEEP_TTL
    args.push('s', 'u', s.sceneStr, num(scene.expectedVersion), num(s.version), num(s.id), userRef(s.userId, insertsUser), sceneTail(s), ttl, ticketOf(s))
  }

  if (user !== undefined) {
    const isInsert = user.op === 'insert'
    args.push(
      'u',
      isInsert ? 'i' : 'u',
      isInsert ? '' : num(user.user.id),
      user.user.openid,
      isInsert ? '' : num(user.expectedVersion),
      encodeUser(user.user),
    )
    // Core's status and the record's type decide where the script files each record (active set and
    // the reminders' index of its type, queue, neither), and with what score: the script never
    // decodes a record.
    const filed = (a: NewAuthorization) => [...authorizationFiling(a), authorizationTail(a)]
    args.push(num(user.insertAuthorizations.length))
    for (const a of user.insertAuthorizations) args.push(...filed(a))
    const updates = isInsert ? [] : user.updateAuthorizations
    args.push(num(updates.length))
    for (const a of updates) args.push(num(a.id), ...filed(a))
  }

  if (session !== undefined) {
    args.push(
      't',
      session.token,
      userRef(session.userId, insertsUser),
      num(session.sceneId),
      sessionTail(session),
      relativeTtl(session.expiresAt, session.createdAt, ctx.graceMs),
      num(session.expiresAt),
      num(session.createdAt),
    )
  }

  if (ledger !== undefined && ledger.length > 0) {
    args.push('l', num(ledger.length))
    for (const entry of ledger) args.push(userRef(entry.userId, insertsUser), authorizationRef(entry.authorizationId, inserted), ledgerTail(entry))
  }

  if (idempotency !== undefined) {
    const ref = idempotency.authorizationId === null ? '' : authorizationRef(idempotency.authorizationId, inserted)
    args.push('i', idempotency.key, ref, idempotencyTail(idempotency))
  }
  return args
}

/**
 * The confirm ticket digest a scene is filed under, '' for none. An empty digest would be read as
 * "none" and leave the scene out of the index, so it is refused before anything is sent.
 */
function ticketOf(scene: Pick<SceneRecord, 'confirmation'>): string {
  if (scene.confirmation === null) return ''
  if (scene.confirmation.ticketHash === '') throw new RedisStoreError('invalid_change_set', 'a scene confirmation with an empty ticketHash')
  return scene.confirmation.ticketHash
}

/**
 * An authorization reference as the script reads it: the id, or `#i` for the i-th one the commit
 * inserts. A reference past the inserted ones is refused before anything is sent: the script
 * would otherwise fail after its first write, and a script's writes are not rolled back.
 */
function authorizationRef(ref: AuthorizationRef, inserted: number): string {
  if (typeof ref === 'number') return num(ref)
  if (!Number.isInteger(ref.inserted) || ref.inserted < 0 || ref.inserted >= inserted) {
    throw new RedisStoreError('invalid_change_set', `{ inserted: ${ref.inserted} } refers to no authorization inserted by the change set`)
  }
  return `#${ref.inserted}`
}

/** A user reference as the script reads it: '' for none, '@' for NEW_USER, else the id. */
function userRef(ref: UserRef | null, insertsUser: boolean): string {
  if (ref === null) return ''
  if (ref !== NEW_USER) return num(ref)
  // A dangling NEW_USER would be stored as "no user": refuse it before anything is sent.
  if (!insertsUser) throw new RedisStoreError('invalid_change_set', 'NEW_USER used in a change set that inserts no user')
  return '@'
}

/** The commit script's reply as a {@link CommitResult}. */
export function parseCommitReply(reply: unknown): CommitResult {
  if (typeof reply !== 'string') throw new RedisStoreError('unexpected_reply', `unexpected commit reply ${describeReply(reply)}`)
  if (reply === 'conflict|scene') return { ok: false, conflict: 'scene' }
  if (reply === 'conflict|user') return { ok: false, conflict: 'user' }
  if (reply === 'conflict|idempotency') return { ok: false, conflict: 'idempotency' }
  const parts = reply.split('|')
  if (parts.length !== 5 || parts[0] !== 'ok') throw new RedisStoreError('unexpected_reply', `unexpected commit reply ${describeReply(reply)}`)
  const ids: AssignedIds = {
    sceneId: optionalId(parts[1]),
    userId: optionalId(parts[2]),
    sessionId: optionalId(parts[3]),
    authorizationIds: parts[4] === '' || parts[4] === undefined ? [] : parts[4].split(',').map(Number),
  }
  return { ok: true, ids }
}

function optionalId(field: string | undefined): number | null {
  return field === undefined || field === '' ? null : Number(field)
}
