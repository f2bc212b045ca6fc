/**
 * What the multi-process tests (multiprocess.test.ts, crash-safety.test.ts) share: a fresh file with
 * worker processes forked on it and the parent's own service beside them, torn down after each test;
 * phases driven on every worker at once; and the checks of the file the load left behind.
 */
import Database from 'better-sqlite3'
import { afterEach, expect } from 'vitest'
import { createScanAuth, type ScanAuth } from '@scanauth/core'
import { checkInvariants, halfAppliedWrites, ManualClock, RecordingQrProvider, type StoreSnapshot } from '@scanauth/testkit'
import { SqliteStore } from '@scanauth/sqlite'
import { SERVICE_SETTINGS, startWorker, type Command, type Report, type WorkerHandle } from '../workers/protocol'
import { explicitChecks } from './checks'
import { dumpFile, tempDb, type TempDb } from './files'

/** `[0, 1, …, n - 1]`. */
export const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i)

/** One count added up over reports. */
export const sum = (reports: Report[], pick: (r: Report) => number): number => reports.reduce((total, r) => total + pick(r), 0)

/** A started load: the file, its workers, and the parent's service on it at `t0` of a manual clock. */
export interface Fleet {
  filename: string
  workers: WorkerHandle[]
  clock: ManualClock
  t0: number
  /** The parent's own store on the file; the test closes it once it has set the scene up. */
  parent: SqliteStore
  auth: ScanAuth
}

/**
 * Registers the teardown (SIGKILL every worker still running, wait for all to exit, delete the
 * folder) and returns `start`. Call once at the top of a test file.
 */
export function useWorkerFleet(): { start(workerCount: number): Promise<Fleet> } {
  let temp: TempDb | null = null
  let workers: WorkerHandle[] = []
  afterEach(async () => {
    for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL')
    await Promise.all(workers.map((w) => w.exited))
    workers = []
    await temp?.remove()
    temp = null
  })
  return {
    /** A fresh file and `workerCount` workers on it; all of them open the new file at the same moment, so one migrates it. */
    async start(workerCount) {
      temp = await tempDb()
      const { filename } = temp
      workers = await Promise.all(range(workerCount).map((i) => startWorker(filename, i)))
      const clock = new ManualClock()
      const t0 = clock.now()
      const parent = new SqliteStore({ filename })
      const auth = createScanAuth({ store: parent, qr: new RecordingQrProvider(), now: clock.now, ...SERVICE_SETTINGS })
      return { filename, workers, clock, t0, parent, auth }
    },
  }
}

/** Runs a phase on every worker at once (the command for worker `i` is `command(i)`, or the same one for all); resolves with their reports in order. */
export function runOnAll(workers: WorkerHandle[], command: Command | ((index: number) => Command)): Promise<Report[]> {
  return Promise.all(workers.map((w, i) => w.run(typeof command === 'function' ? command(i) : command)))
}

/** Tells each worker to close its store and exit, and waits until every one has. */
export async function exitAll(workers: WorkerHandle[]): Promise<void> {
  for (const w of workers) w.child.send({ kind: 'exit' })
  await Promise.all(workers.map((w) => w.exited))
}

/** The tokens of every session of `openid`'s user in `snapshot`. */
export function sessionTokens(snapshot: StoreSnapshot, openid: string): string[] {
  const user = snapshot.users.find((u) => u.openid === openid)
  return snapshot.sessions.filter((s) => s.userId === user?.id).map((s) => s.token)
}

/**
 * Checks the file the load left: whole to SQLite (integrity_check, foreign_key_check, in a raw
 * connection opened with `options`), then every invariant on a dump of it (testkit's and the
 * explicit ones). Returns the dump.
 */
export function expectSoundFile(filename: string, options?: Database.Options): StoreSnapshot {
  const raw = new Database(filename, options)
  try {
    expect(raw.pragma('integrity_check', { simple: true })).toBe('ok')
    expect(raw.pragma('foreign_key_check')).toEqual([])
  } finally {
    raw.close()
  }
  const snapshot = dumpFile(filename)
  expect(checkInvariants(snapshot)).toEqual([])
  expect(explicitChecks(snapshot)).toEqual([])
  expect(halfAppliedWrites(snapshot)).toEqual([])
  return snapshot
}
