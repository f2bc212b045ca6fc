/**
 * The load script's side of a {@link LoadQuery}: its arguments, and its reply as a
 * {@link LoadResult}. Loads of a scene alone or a session alone never get here: they are one GET
 * (`redis-store.ts`), the device's poll being the hottest read of all.
 *
 * @module
 */
import type { LoadQuery, LoadResult } from '@scanauth/core'
import { decodeAuthorizationHash, decodeScene, decodeSession, decodeUser } from './codec'
import { describeReply, RedisStoreError } from './errors'

/** Whether `query` asks for exactly one of: the scene, the session (the single-GET loads). */
export function singleGet(query: LoadQuery): 'scene' | 'session' | 'none' | null {
  if (query.userId !== undefined || query.openid !== undefined || query.latestSessionOfScene !== undefined) return null
  if (query.sessionToken === undefined) return query.sceneStr === undefined ? 'none' : 'scene'
  return query.sceneStr === undefined ? 'session' : null
}

/** The load script's ARGV for `query` (see `scripts/load.ts`). */
export function loadArgs(query: LoadQuery, prefix: string): string[] {
  if (query.userId !== undefined && query.openid !== undefined) throw new RedisStoreError('invalid_query', 'load takes userId or openid, not both')
  return [
    prefix,
    query.sceneStr ?? '',
    query.userId === undefined ? '' : String(query.userId),
    query.openid ?? '',
    query.sessionToken ?? '',
    query.latestSessionOfScene === undefined ? '' : String(query.latestSessionOfScene),
  ]
}

/** Decodes the load script's reply (see `scripts/load.ts` for its shape). */
export function decodeLoadReply(query: LoadQuery, reply: unknown): LoadResult {
  if (!Array.isArray(reply) || reply.length !== 7) throw new RedisStoreError('unexpected_reply', `unexpected load reply ${describeReply(reply)}`)
  const [scene, userId, user, authorizations, session, latestToken, latest] = reply as [
    string | null,
    string | null,
    string | null,
    string[],
    string | null,
    string | null,
    string | null,
  ]
  const id = userId === null ? null : Number(userId)
  return {
    scene: scene === null || query.sceneStr === undefined ? null : decodeScene(query.sceneStr, scene),
    user: user === null || id === null ? null : { user: decodeUser(id, user), authorizations: decodeAuthorizationHash(id, authorizations) },
    session: session === null || query.sessionToken === undefined ? null : decodeSession(query.sessionToken, session),
    latestSession: latest === null || latestToken === null ? null : decodeSession(latestToken, latest),
  }
}
