/**
 * What a command gets: an open store of one of the three kinds, what the store contract does not
 * offer (a user's live sessions, read from the backend directly), and what closes it all.
 *
 * @module
 */
import type { SessionRecord, Store } from '@scanauth/core'
import { ScanAuthCliError } from './errors'

/** A user's live sessions: how many, and the latest few (highest id first). */
export interface LiveSessions {
  /** How many of the user's sessions are live (`expiresAt > now`). */
  live: number
  /** The latest of them, newest first. */
  latest: SessionRecord[]
}

/** An open store. */
export interface OpenedStore {
  /** The kind of backend. */
  kind: 'sqlite' | 'redis' | 'postgres'
  /** The store in messages, without secrets: `sqlite /srv/data/scanauth.sqlite`, `redis redis://host:6379 prefix scanauth:`. */
  label: string
  /** The store, ready for `createScanAuth`. */
  store: Store
  /** The user's live sessions at `now`, and the latest `latest` of them. */
  liveSessions(userId: number, now: number, latest: number): Promise<LiveSessions>
  /** Closes the store and every connection or file the CLI opened for it. */
  close(): Promise<void>
}

/** What `migrate` did. */
export interface MigrationReport {
  /** The kind of backend. */
  kind: 'sqlite' | 'redis' | 'postgres'
  /** The store, as in {@link OpenedStore.label}. */
  label: string
  /** The schema version found (null on Redis, which has no schema). */
  from: number | null
  /** The schema version left (null on Redis). */
  to: number | null
  /** Whether a migration ran. */
  migrated: boolean
}

/**
 * Checks a schema version found in a store against the one this CLI's store package reads, for a
 * command that is not `migrate`: nothing is written to a store that is not current.
 */
export function assertCurrent(found: number, current: number, where: string): void {
  if (found === 0) {
    throw new ScanAuthCliError(
      'store_not_initialized',
      `${where} holds no scanauth tables: is it the store your servers use? (\`scanauth migrate\` creates the tables)`,
    )
  }
  if (found < current) {
    throw new ScanAuthCliError(
      'schema_outdated',
      `${where} is at schema version ${found} and this CLI needs version ${current}: run \`scanauth migrate\` (servers of this release also migrate when they start)`,
    )
  }
  if (found > current) {
    throw new ScanAuthCliError(
      'schema_too_new',
      `${where} is at schema version ${found}, written by a newer release; this CLI knows versions up to ${current}: upgrade @scanauth/cli`,
    )
  }
}

/** Runs `work` on an opened store and closes it, whatever happens; a failure to close does not hide the result. */
export async function using<T>(opened: OpenedStore, work: (opened: OpenedStore) => Promise<T>): Promise<T> {
  try {
    return await work(opened)
  } finally {
    await opened.close().catch(() => undefined)
  }
}
