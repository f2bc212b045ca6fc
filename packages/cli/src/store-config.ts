/**
 * Which store the command works on: from `--sqlite`, `--redis` or `--postgres`, or else from the
 * environment variables the example servers read (`SCANAUTH_STORE` and the rest), with the same
 * defaults, so that the CLI run beside a server finds that server's store without options.
 *
 * @module
 */
import { resolve } from 'node:path'
import { ScanAuthCliError } from './errors'

/** Where the store lives, and what named it (for messages). */
export type StoreConfig =
  | {
      kind: 'sqlite'
      /** Absolute path of the file. */
      filename: string
      /** What named the file: `--sqlite`, `SCANAUTH_SQLITE_FILE`, or `default, SCANAUTH_SQLITE_FILE unset`. */
      from: string
    }
  | {
      kind: 'redis'
      url: string
      keyPrefix: string
      /** What named the URL: `--redis`, `REDIS_URL`, or the default. */
      from: string
    }
  | {
      kind: 'postgres'
      url: string
      schema: string
      /** What named the URL: `--postgres`, `DATABASE_URL`, or the default. */
      from: string
    }

/** The store options of the command line, as given (absent when not given). */
export interface StoreFlags {
  sqlite?: string
  redis?: string
  redisPrefix?: string
  postgres?: string
  pgSchema?: string
}

/** The examples' defaults (`examples/shared/src/config.ts`). */
export const DEFAULT_SQLITE_FILE = './data/scanauth.sqlite'
/** Redis when `REDIS_URL` is not set. */
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379'
/** The key prefix when `SCANAUTH_REDIS_PREFIX` is not set (the examples'; not `@scanauth/redis`'s own default). */
export const DEFAULT_REDIS_PREFIX = 'scanauth:'
/** PostgreSQL when `DATABASE_URL` is not set. */
export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test'
/** The schema when `SCANAUTH_PG_SCHEMA` is not set. */
export const DEFAULT_PG_SCHEMA = 'scanauth'

/** The schema names `PostgresStore` accepts. */
const PG_SCHEMA = /^[a-z_][a-z0-9_]{0,39}$/

/**
 * The store to open. Options win over the environment, the environment over the defaults; a
 * variable set to white space only counts as unset, as in the examples.
 */
export function storeConfig(flags: StoreFlags, env: Record<string, string | undefined>): StoreConfig {
  const value = (name: string) => {
    const raw = env[name]?.trim()
    return raw ? raw : undefined
  }
  const named = (['sqlite', 'redis', 'postgres'] as const).filter((kind) => flags[kind] !== undefined)
  if (named.length > 1) throw new ScanAuthCliError('invalid_config', `give one store, not ${named.map((k) => `--${k}`).join(' and ')}`)

  let kind = named[0] as string | undefined
  let kindFrom = kind === undefined ? undefined : `--${kind}`
  if (kind === undefined) {
    kind = value('SCANAUTH_STORE') ?? 'sqlite'
    kindFrom = `SCANAUTH_STORE=${kind}`
  }
  if (kind === 'memory') {
    throw new ScanAuthCliError(
      'invalid_config',
      'SCANAUTH_STORE=memory: a memory store lives inside one server process and no other process can reach it; point the CLI at a sqlite, redis or postgres store',
    )
  }
  if (kind !== 'sqlite' && kind !== 'redis' && kind !== 'postgres') {
    throw new ScanAuthCliError('invalid_config', `SCANAUTH_STORE must be sqlite, redis or postgres, not "${kind}"`)
  }
  if (flags.redisPrefix !== undefined && kind !== 'redis') {
    throw new ScanAuthCliError('invalid_config', `--redis-prefix applies to a Redis store, but the store is ${kind} (${kindFrom})`)
  }
  if (flags.pgSchema !== undefined && kind !== 'postgres') {
    throw new ScanAuthCliError('invalid_config', `--pg-schema applies to a PostgreSQL store, but the store is ${kind} (${kindFrom})`)
  }

  if (kind === 'sqlite') {
    const [file, from] = pick(flags.sqlite, '--sqlite', value('SCANAUTH_SQLITE_FILE'), 'SCANAUTH_SQLITE_FILE', DEFAULT_SQLITE_FILE)
    if (file === '') throw new ScanAuthCliError('invalid_config', '--sqlite needs a file name')
    return { kind, filename: resolve(file), from }
  }
  if (kind === 'redis') {
    const [url, from] = pick(flags.redis, '--redis', value('REDIS_URL'), 'REDIS_URL', DEFAULT_REDIS_URL)
    const [keyPrefix, prefixFrom] = pick(flags.redisPrefix, '--redis-prefix', value('SCANAUTH_REDIS_PREFIX'), 'SCANAUTH_REDIS_PREFIX', DEFAULT_REDIS_PREFIX)
    if (!hasProtocol(url, ['redis:', 'rediss:'])) {
      throw new ScanAuthCliError('invalid_config', `${from} must be a redis:// or rediss:// URL, e.g. redis://127.0.0.1:6379`)
    }
    if (keyPrefix.length === 0 || keyPrefix.length > 256) throw new ScanAuthCliError('invalid_config', `${prefixFrom} must be 1 to 256 characters`)
    return { kind, url, keyPrefix, from }
  }
  const [url, from] = pick(flags.postgres, '--postgres', value('DATABASE_URL'), 'DATABASE_URL', DEFAULT_DATABASE_URL)
  const [schema, schemaFrom] = pick(flags.pgSchema, '--pg-schema', value('SCANAUTH_PG_SCHEMA'), 'SCANAUTH_PG_SCHEMA', DEFAULT_PG_SCHEMA)
  // The URL is never echoed: it may hold a password.
  if (!hasProtocol(url, ['postgres:', 'postgresql:'])) {
    throw new ScanAuthCliError('invalid_config', `${from} must be a postgres:// or postgresql:// URL, e.g. postgres://user:password@127.0.0.1:5432/database`)
  }
  if (!PG_SCHEMA.test(schema)) {
    throw new ScanAuthCliError('invalid_config', `${schemaFrom} must be 1 to 40 characters of a-z, 0-9 and _, not starting with a digit, not "${schema}"`)
  }
  return { kind, url, schema, from }
}

/** The option's value, else the variable's, else the default; with what it came from. */
function pick(flag: string | undefined, flagName: string, variable: string | undefined, variableName: string, fallback: string): [string, string] {
  if (flag !== undefined) return [flag, flagName]
  if (variable !== undefined) return [variable, variableName]
  return [fallback, `default, ${variableName} unset`]
}

function hasProtocol(url: string, protocols: string[]): boolean {
  try {
    return protocols.includes(new URL(url).protocol)
  } catch {
    return false
  }
}

/**
 * A URL without its password, for messages: `redis://:***@host:6379/`. Anything that does not
 * parse is named only by `fallback`.
 */
export function redactUrl(url: string, fallback: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password !== '') parsed.password = '***'
    return parsed.toString()
  } catch {
    return fallback
  }
}
