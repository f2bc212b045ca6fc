/**
 * The parent side of the multi-process tests: a fresh schema with worker processes forked on it
 * (`../workers/load-worker.ts`, each with its own pool, PostgresStore and service) and the parent's
 * own service beside them, torn down after each test; and phases driven on every worker at once.
 */
import { fileURLToPath } from 'node:url'
import type pg from 'pg'
import { afterEach } from 'vitest'
import { createScanAuth, type ScanAuth } from '@scanauth/core'
import { forkWorker, ManualClock, RecordingQrProvider, type WorkerHandle as GenericWorkerHandle } from '@scanauth/testkit'
import { PostgresStore } from '@scanauth/postgres'
import { SERVICE_SETTINGS, type Command, type Report, type WorkerEnvironment } from '../workers/protocol'
import { noBackendsLeft } from './backends'
import { DATABASE_URL, dropSchema, freshSchemaName } from './database'

/** `[0, 1, …, n - 1]`. */
export const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i)

/** One count added up over reports. */
export const sum = (reports: Report[], pick: (r: Report) => number): number => reports.reduce((total, r) => total + pick(r), 0)

/** A forked worker, seen from the parent (testkit's harness, with this package's commands and reports). */
export type WorkerHandle = GenericWorkerHandle<Command, Report>

/** A started fleet on its own schema. */
export interface Fleet {
  schema: string
  /** The `application_name` of every worker's pool (and of nothing else). */
  applicationName: string
  workers: WorkerHandle[]
  clock: ManualClock
  t0: number
  /** The parent's own service, on `pool`, at the time of `clock`. */
  auth: ScanAuth
}

const workerPath = fileURLToPath(new URL('../workers/load-worker.ts', import.meta.url))
const packageDir = fileURLToPath(new URL('../..', import.meta.url))

/**
 * Registers the teardown (SIGKILL whatever worker still runs, wait until its backends are gone,
 * drop the schema) and returns `start`. Call once at the top of a test file; `pool` is the parent's.
 */
export function useWorkerFleet(pool: pg.Pool): { start(workerCount: number): Promise<Fleet> } {
  let current: { fleet: Fleet; store: PostgresStore } | null = null
  afterEach(async () => {
    if (current === null) return
    const { fleet, store } = current
    current = null
    for (const w of fleet.workers) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL')
    await Promise.all(fleet.workers.map((w) => w.exited))
    await noBackendsLeft(pool, fleet.applicationName)
    await store.close()
    await dropSchema(pool, fleet.schema)
  })
  return {
    /** A fresh schema and `workerCount` workers on it, all migrating it at the same moment (one does it). */
    async start(workerCount) {
      const schema = freshSchemaName()
      const applicationName = `${schema}_workers`
      const store = new PostgresStore({ pool, schema })
      const clock = new ManualClock()
      const fleet: Fleet = {
        schema,
        applicationName,
        workers: [],
        clock,
        t0: clock.now(),
        auth: createScanAuth({ store, qr: new RecordingQrProvider(), now: clock.now, ...SERVICE_SETTINGS }),
      }
      current = { fleet, store }
      const started = range(workerCount).map((i) => startWorker({
        SCANAUTH_DATABASE_URL: DATABASE_URL,
        SCANAUTH_SCHEMA: schema,
        SCANAUTH_APPLICATION_NAME: applicationName,
        SCANAUTH_WORKER_INDEX: String(i),
      }))
      fleet.workers = started.map((s) => s.handle)
      await Promise.all(started.map((s) => s.ready))
      await store.migrate()
      return fleet
    },
  }
}

/** Runs a phase on every worker at once (worker `i` gets `command(i)`, or all the same one); their reports in order. */
export function runOnAll(workers: WorkerHandle[], command: Command | ((index: number) => Command)): Promise<Report[]> {
  return Promise.all(workers.map((w, i) => w.run(typeof command === 'function' ? command(i) : command)))
}

/** Tells each worker to close its store and pool and exit; waits until every one has, and checks they exited cleanly. */
export async function exitAll(workers: WorkerHandle[]): Promise<void> {
  for (const w of workers) w.tell({ kind: 'exit' })
  const outcomes = await Promise.all(workers.map((w) => w.exited))
  const unclean = outcomes.filter((o) => o.code !== 0)
  if (unclean.length > 0) throw new Error(`workers exited uncleanly: ${JSON.stringify(unclean)}`)
}

/** Forks one worker; `ready` resolves once it has migrated and answers commands. */
function startWorker(environment: WorkerEnvironment): { handle: WorkerHandle; ready: Promise<void> } {
  return forkWorker<Command, Report>({
    path: workerPath,
    cwd: packageDir,
    execArgv: ['--import', 'tsx', '--conditions=@scanauth/source'],
    env: { ...environment },
    name: `worker ${environment.SCANAUTH_WORKER_INDEX}`,
  })
}
