/**
 * The errors `@scanauth/redis` throws itself. Errors of Redis or of the connection (a refused
 * connection, `READONLY` after a failover, a timeout) pass through unchanged as ioredis errors.
 *
 * @module
 */

/** What went wrong, machine-readable. */
export type RedisStoreErrorCode =
  /** The options of `new RedisStore` or of `purgeExpired` are invalid; the message names the option. */
  | 'invalid_options'
  /** A load query broke the Store contract (both `userId` and `openid`); nothing was read. */
  | 'invalid_query'
  /** A change set broke the Store contract (a bug in the caller, never a race); nothing was sent. */
  | 'invalid_change_set'
  /**
   * An order given to `saveOrder` cannot be stored faithfully: a number that is not finite, a
   * `createdAt` that is not a safe integer ≥ 0 (the open-order indexes sort it as 16 digits), or a
   * field of the wrong type. A bug in the caller; nothing was sent.
   */
  | 'invalid_order'
  /**
   * A key under the store's prefix holds a value this store did not write (another program, an
   * older format, a hand edit). The message names the kind of record and quotes the value's start.
   */
  | 'malformed_record'
  /**
   * A script answered in a shape the store does not know: the server runs other scripts under
   * our names, or something between the store and the server changed the reply.
   */
  | 'unexpected_reply'

/**
 * An error of the Redis store: the one class to catch for what the store itself refuses or cannot
 * read. Messages start with `[@scanauth/redis]` so they are easy to place in a log.
 *
 * @example
 * ```ts
 * import { RedisStoreError, type RedisStore } from '@scanauth/redis'
 *
 * declare const store: RedisStore
 * try {
 *   await store.load({ sceneStr: 'abc' })
 * } catch (error) {
 *   if (error instanceof RedisStoreError && error.code === 'malformed_record') console.error(error.message)
 *   else throw error
 * }
 * ```
 */
export class RedisStoreError extends Error {
  /** Machine-readable code. */
  readonly code: RedisStoreErrorCode

  constructor(code: RedisStoreErrorCode, message: string, options?: { cause?: unknown }) {
    super(`[@scanauth/redis] ${message}`, options)
    this.name = 'RedisStoreError'
    this.code = code
  }
}

/**
 * A script reply, quoted for an `unexpected_reply` message: JSON up to 80 characters (a wrong reply
 * can be large, and a log line needs only enough to recognise it).
 */
export function describeReply(reply: unknown): string {
  let text: string
  try {
    text = JSON.stringify(reply) ?? String(reply)
  } catch {
    text = String(reply)
  }
  return text.length > 80 ? `${text.slice(0, 80)}…` : text
}
