/**
 * How a {@link LoadQuery} is read, in one round trip either way: the parts that are plain string
 * keys (a scene, a session, an idempotency record) with one GET or MGET, one authorization by id
 * with one HGET, and anything else (a user, a session's user, a scene's latest session, a scene by
 * its confirm ticket, a mix) with the load script (`scripts/load.ts`). A device's poll, the
 * hottest read of all, is one GET.
 *
 * @module
 */
import type { SceneRecord } from '@scanauth/core'
import type { LoadQuery, LoadResult } from '@scanauth/core/store'
import { decodeAuthorization, decodeAuthorizationList, decodeSession, decodeUser } from './codec'
import { decodeScene } from './codec-scenes'
import { decodeIdempotency } from './codec-entitlements'
import { describeReply, RedisStoreError } from './errors'
import type { Keys } from './keys'

/** A load with nothing in it: every part `null`. */
export const EMPTY_LOAD: Readonly<LoadResult> = Object.freeze({
  scene: null,
  user: null,
  session: null,
  latestSession: null,
  idempotency: null,
  authorization: null,
})

/** The string-key parts of a load that GET/MGET can read. */
type StringPart = 'scene' | 'session' | 'idempotency'

/** How a query is read: by GET/MGET of string keys, by one HGET of an authorization, or by the load script. */
export type LoadPlan =
  | { kind: 'strings'; parts: StringPart[]; keys: string[] }
  | { kind: 'authorization'; id: number }
  | { kind: 'script' }

/** Chooses the cheapest way to read `query` (see the module comment). */
export function planLoad(query: LoadQuery, keys: Keys): LoadPlan {
  if (query.userId !== undefined || query.openid !== undefined || query.latestSessionOfScene !== undefined) return { kind: 'script' }
  // The ticket index names the scene, which the script then reads: still one round trip (B-confirm-6).
  if (query.confirmTicketHash !== undefined) return { kind: 'script' }
  // The session's user is found through the session inside the script (B-load-2).
  if (query.userOfSession === true && query.sessionToken !== undefined) return { kind: 'script' }
  if (query.authorizationId !== undefined) {
    const alone = query.sceneStr === undefined && query.sessionToken === undefined && query.idempotencyKey === undefined
    return alone ? { kind: 'authorization', id: query.authorizationId } : { kind: 'script' }
  }
  const plan: { kind: 'strings'; parts: StringPart[]; keys: string[] } = { kind: 'strings', parts: [], keys: [] }
  const add = (part: StringPart, key: string) => {
    plan.parts.push(part)
    plan.keys.push(key)
  }
  if (query.sceneStr !== undefined) add('scene', keys.scene(query.sceneStr))
  if (query.sessionToken !== undefined) add('session', keys.session(query.sessionToken))
  if (query.idempotencyKey !== undefined) add('idempotency', keys.idempotency(query.idempotencyKey))
  return plan
}

/** Decodes the values of a `strings` plan, in the order of its parts. */
export function decodeStrings(query: LoadQuery, parts: readonly StringPart[], values: ReadonlyArray<string | null>): LoadResult {
  const result: LoadResult = { ...EMPTY_LOAD }
  parts.forEach((part, i) => {
    const value = values[i] ?? null
    if (value === null) return
    if (part === 'scene') result.scene = decodeScene(query.sceneStr as string, value)
    else if (part === 'session') result.session = decodeSession(query.sessionToken as string, value)
    else result.idempotency = decodeIdempotency(query.idempotencyKey as string, value)
  })
  return result
}

/** The authorization of a HGET reply. */
export function decodeAuthorizationReply(id: number, value: string | null): LoadResult {
  return { ...EMPTY_LOAD, authorization: value === null ? null : decodeAuthorization(id, value) }
}

/** The load script's ARGV for `query` (see `scripts/load.ts`). */
export function loadArgs(query: LoadQuery, prefix: string): string[] {
  if (query.userId !== undefined && query.openid !== undefined) throw new RedisStoreError('invalid_query', 'load takes userId or openid, not both')
  const ofSession = query.userOfSession === true && query.sessionToken !== undefined
  if (ofSession && (query.userId !== undefined || query.openid !== undefined)) {
    throw new RedisStoreError('invalid_query', 'load takes userOfSession or userId or openid, not two of them')
  }
  if (query.sceneStr !== undefined && query.confirmTicketHash !== undefined) {
    throw new RedisStoreError('invalid_query', 'load takes sceneStr or confirmTicketHash, not both')
  }
  const optional = (value: string | number | undefined) => (value === undefined ? '' : String(value))
  return [
    prefix,
    optional(query.sceneStr),
    optional(query.userId),
    optional(query.openid),
    optional(query.sessionToken),
    optional(query.latestSessionOfScene),
    query.wholeQueue === true ? '1' : '',
    optional(query.idempotencyKey),
    optional(query.authorizationId),
    ofSession ? '1' : '',
    optional(query.confirmTicketHash),
  ]
}

/** Decodes the load script's reply (see `scripts/load.ts` for its shape). */
export function decodeLoadReply(query: LoadQuery, reply: unknown): LoadResult {
  if (!Array.isArray(reply) || reply.length !== 10) throw new RedisStoreError('unexpected_reply', `unexpected load reply ${describeReply(reply)}`)
  const [scene, userId, user, authorizations, session, latestToken, latest, idempotency, authorization, sceneStr] = reply as [
    string | null,
    string | null,
    string | null,
    string[],
    string | null,
    string | null,
    string | null,
    string | null,
    string | null,
    string | null,
  ]
  const id = userId === null ? null : Number(userId)
  return {
    scene: scene === null || sceneStr === null ? null : sceneOf(query, sceneStr, scene),
    user: user === null || id === null ? null : { user: decodeUser(id, user), authorizations: decodeAuthorizationList(authorizations) },
    session: session === null || query.sessionToken === undefined ? null : decodeSession(query.sessionToken, session),
    latestSession: latest === null || latestToken === null ? null : decodeSession(latestToken, latest),
    idempotency: idempotency === null || query.idempotencyKey === undefined ? null : decodeIdempotency(query.idempotencyKey, idempotency),
    authorization: authorization === null || query.authorizationId === undefined ? null : decodeAuthorization(query.authorizationId, authorization),
  }
}

/**
 * The scene of a load script reply. Found by its confirm ticket, it must carry that ticket: the
 * index key is written with the scene and never outlives it, and a ticketHash never changes once
 * set (core's rule), so this only guards against a scene rewritten without its confirmation,
 * which the index would otherwise still name (B-confirm-6: an unknown ticket finds nothing).
 */
function sceneOf(query: LoadQuery, sceneStr: string, value: string): SceneRecord | null {
  const scene = decodeScene(sceneStr, value)
  if (query.confirmTicketHash === undefined || scene.confirmation?.ticketHash === query.confirmTicketHash) return scene
  return null
}
