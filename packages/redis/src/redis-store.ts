/**
 * `RedisStore`: the Store contract on Redis through ioredis (standalone, Sentinel or Cluster).
 *
 * - A load is one round trip: a GET for a scene or a session alone, else one read-only Lua script.
 * - A commit is one Lua script that checks the change set's versions and applies its writes
 *   atomically on the server, so commits from any number of processes serialize per key.
 * - Scenes and sessions expire by relative TTLs derived from their own times (`expiry.ts`); users
 *   and authorizations never expire.
 *
 * The key layout, TTLs and Cluster notes are in `docs/redis.md`.
 *
 * @module
 */
import type { ChangeSet, CommitResult, LoadQuery, LoadResult, Store } from '@scanauth/core'
import { commitArgs, parseCommitReply } from './commit-args'
import { nextCommitId } from './commit-id'
import { Keys } from './keys'
import { decodeScene, decodeSession } from './codec'
import { decodeLoadReply, loadArgs, singleGet } from './load'
import { resolveOptions, type RedisStoreOptions } from './options'
import { COMMIT_SCRIPT } from './scripts/commit'
import { LOAD_SCRIPT } from './scripts/load'
import { LuaScript, type ScriptClient } from './scripts/lua-script'

/** The scripts, hashed once per process and shared by every store. */
const commitScript = new LuaScript(COMMIT_SCRIPT)
const loadScript = new LuaScript(LOAD_SCRIPT)

/** The commands the store sends: GET and the two script commands. */
type StoreClient = ScriptClient & { get(key: string): Promise<string | null> }

/**
 * A scanauth store on Redis. The client belongs to the application: the store never connects,
 * quits or reconfigures it, and {@link RedisStore.close} leaves it open.
 *
 * Requires Redis 7.0 or later (the scripts use `#!lua` flags).
 *
 * @example
 * ```ts
 * import { Redis } from 'ioredis'
 * import { createScanAuth } from '@scanauth/core'
 * import { RedisStore } from '@scanauth/redis'
 *
 * const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')
 * const auth = createScanAuth({ store: new RedisStore({ client: redis }), qr })
 * ```
 */
export class RedisStore implements Store {
  /** The key layout under this store's prefix. */
  readonly keys: Keys
  private readonly client: StoreClient
  private readonly graceMs: number
  private readonly receiptTtlMs: number

  /**
   * Checks the options; connects nothing (the client is the application's).
   *
   * @throws {@link RedisStoreError} `invalid_options` naming the option that is wrong.
   */
  constructor(options: RedisStoreOptions) {
    const resolved = resolveOptions(options)
    this.client = resolved.client as unknown as StoreClient
    this.keys = new Keys(resolved.keyPrefix)
    this.graceMs = resolved.expiryGraceSeconds * 1000
    this.receiptTtlMs = resolved.commitReceiptSeconds * 1000
  }

  /** The prefix of every key this store writes. */
  get keyPrefix(): string {
    return this.keys.prefix
  }

  /**
   * Reads what `query` asks for in one round trip. Absent parts are `null`. A user comes with its
   * pending and active authorizations, ordered by `createdAt`, then id.
   *
   * @throws {@link RedisStoreError} `invalid_query` for `userId` with `openid`; `malformed_record` when a
   *   key holds a value this store did not write.
   */
  load(query: LoadQuery): Promise<LoadResult> {
    switch (singleGet(query)) {
      case 'scene': {
        // A device's poll: one GET of the packed scene, decoded without any detour.
        const sceneStr = query.sceneStr as string
        return this.client.get(this.keys.scene(sceneStr)).then((value) => ({
          scene: value === null ? null : decodeScene(sceneStr, value),
          user: null,
          session: null,
          latestSession: null,
        }))
      }
      case 'session': {
        const token = query.sessionToken as string
        return this.client.get(this.keys.session(token)).then((value) => ({
          scene: null,
          user: null,
          session: value === null ? null : decodeSession(token, value),
          latestSession: null,
        }))
      }
      case 'none':
        return Promise.resolve({ scene: null, user: null, session: null, latestSession: null })
      default:
        return this.loadByScript(query)
    }
  }

  private async loadByScript(query: LoadQuery): Promise<LoadResult> {
    return decodeLoadReply(query, await loadScript.run(this.client, [this.keys.seq], loadArgs(query, this.keys.prefix)))
  }

  /**
   * Checks the change set's expectations and applies all of its writes, or none, in one script
   * run. A failed expectation returns `{ ok: false, conflict }`; a connection error throws. When
   * ioredis re-sends a commit whose reply was lost, the commit's receipt makes the re-sent copy
   * answer the first outcome instead of applying again.
   *
   * @throws {@link RedisStoreError} `invalid_change_set` when the change set breaks the Store contract
   *   (nothing is sent).
   */
  async commit(changes: ChangeSet): Promise<CommitResult> {
    const args = commitArgs(changes, {
      prefix: this.keys.prefix,
      receiptId: this.receiptTtlMs > 0 ? nextCommitId() : '',
      receiptTtlMs: this.receiptTtlMs,
      graceMs: this.graceMs,
    })
    return parseCommitReply(await commitScript.run(this.client, [this.keys.seq], args))
  }

  /** Does nothing: the store opened nothing, and the client stays the application's to close. */
  async close(): Promise<void> {}
}
