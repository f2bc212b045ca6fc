/**
 * Options of `RedisStore`, parsed once with zod; defaults live here and nowhere else.
 *
 * @module
 */
import type { Cluster, Redis } from 'ioredis'
import { z } from 'zod'
import { RedisStoreError } from './errors'
import { DEFAULT_KEY_PREFIX, hasHashTag } from './keys'

/** Options of {@link RedisStore}. */
export interface RedisStoreOptions {
  /**
   * An ioredis `Redis` (standalone or Sentinel) or `Cluster` client. The application owns it: the
   * store never connects, quits or disconnects it, and adds nothing to it (no `defineCommand`).
   * It must not have an ioredis `keyPrefix` of its own: pass {@link RedisStoreOptions.keyPrefix}
   * instead (the Lua scripts build key names from it).
   */
  client: Redis | Cluster
  /**
   * Prefix of every key the store writes. Default `scanauth:{sa}:`. With a `Cluster` client it must
   * contain a hash tag (`{...}`, non-empty) so every key of the store lands in one slot; with a
   * standalone client a tag is optional, but keeping one lets the same data move to a Cluster.
   */
  keyPrefix?: string
  /**
   * Seconds a scene or session key outlives its record's expiry before Redis deletes it. Default
   * 600. Within the grace, a poll of an expired scene still answers `expired` (after it, the scene
   * is unknown: 404). Expiry itself is always decided by core from the record's times.
   */
  expiryGraceSeconds?: number
  /**
   * Seconds a commit's receipt is kept. Default 120; 0 turns receipts off. ioredis re-sends a
   * command whose reply was lost to a dropped connection; the receipt lets the commit script
   * recognise the re-sent commit and answer its first outcome instead of applying it twice. Keep it
   * longer than the client's reconnect-and-resend window.
   */
  commitReceiptSeconds?: number
}

const hasMethods = (...names: string[]) => (value: unknown) =>
  typeof value === 'object' && value !== null && names.every((n) => typeof (value as Record<string, unknown>)[n] === 'function')

const optionsSchema = z
  .object({
    client: z.custom<Redis | Cluster>(hasMethods('get', 'eval', 'evalsha'), { error: 'client must be an ioredis Redis or Cluster' }),
    keyPrefix: z.string().min(1).max(256).default(DEFAULT_KEY_PREFIX),
    expiryGraceSeconds: z.number().min(0).max(10 * 365 * 24 * 3600).default(600),
    commitReceiptSeconds: z.number().int().min(0).max(24 * 3600).default(120),
  })
  .superRefine((options, ctx) => {
    const client = options.client as { isCluster?: boolean; options?: { keyPrefix?: string } }
    if (client.options?.keyPrefix) {
      ctx.addIssue({
        code: 'custom',
        path: ['client'],
        message: `the client has an ioredis keyPrefix (${JSON.stringify(client.options.keyPrefix)}); pass keyPrefix to RedisStore instead`,
      })
    }
    if (client.isCluster === true && !hasHashTag(options.keyPrefix)) {
      ctx.addIssue({
        code: 'custom',
        path: ['keyPrefix'],
        message: `with a Cluster client the prefix needs a hash tag such as {sa}, so every key shares one slot (got ${JSON.stringify(options.keyPrefix)})`,
      })
    }
  })

/** Options after parsing: every default filled in. */
export type ResolvedRedisStoreOptions = z.infer<typeof optionsSchema>

/** Parses and completes the options, or throws a {@link RedisStoreError} `invalid_options` naming the bad one. */
export function resolveOptions(options: RedisStoreOptions): ResolvedRedisStoreOptions {
  const result = optionsSchema.safeParse(options)
  if (result.success) return result.data
  const issue = result.error.issues[0]
  throw new RedisStoreError('invalid_options', `new RedisStore: ${issue ? `${issue.path.join('.')}: ${issue.message}` : 'invalid options'}`)
}
