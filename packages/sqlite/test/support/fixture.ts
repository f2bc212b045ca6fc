/**
 * The per-test fixture of the backend-specific tests: a fresh temporary folder, stores and raw
 * connections on the file in it, all closed (newest first) and the folder deleted after each test.
 */
import Database from 'better-sqlite3'
import { afterEach, beforeEach } from 'vitest'
import { createScanAuth } from '@scanauth/core'
import { ManualClock, RecordingQrProvider } from '@scanauth/testkit'
import { SqliteStore } from '@scanauth/sqlite'
import { tempDb, type TempDb } from './files'

export const SECOND = 1000
export const HOUR = 3600 * SECOND
export const DAY = 24 * HOUR

/** Registers the hooks and returns the fixture's helpers. Call once at the top of a test file. */
export function useTempFile() {
  let temp: TempDb | null = null
  const handles: Array<{ close(): unknown }> = []
  beforeEach(async () => {
    temp = await tempDb()
  })
  afterEach(async () => {
    for (const handle of handles.splice(0).reverse()) await handle.close()
    await temp?.remove()
    temp = null
  })
  const current = (): TempDb => {
    if (temp === null) throw new Error('useTempFile: no test is running')
    return temp
  }
  return {
    /** The folder and database path of the running test. */
    get temp(): TempDb {
      return current()
    },
    /** Closes `handle` after the test. */
    track<T extends { close(): unknown }>(handle: T): T {
      handles.push(handle)
      return handle
    },
    /** A SqliteStore on the test's file (or `filename`), closed after the test. */
    openStore(filename = current().filename): SqliteStore {
      return this.track(new SqliteStore({ filename }))
    },
    /** A raw better-sqlite3 connection to the test's file, closed after the test. */
    rawDb(options?: Database.Options): Database.Database {
      return this.track(new Database(current().filename, options))
    },
  }
}

/** A service on `store` with a manual clock and a recording QR provider. */
export function service(store: SqliteStore, clock = new ManualClock()) {
  return { clock, auth: createScanAuth({ store, qr: new RecordingQrProvider(), now: clock.now }) }
}
