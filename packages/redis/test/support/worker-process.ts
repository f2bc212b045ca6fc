/**
 * A second Node process for the multi-process and change-notification tests: `worker.ts` forked on
 * a prefix (on the one server, or on a Cluster when given its ports) through testkit's
 * `forkWorker`, driven one phase at a time over IPC.
 */
import { fileURLToPath } from 'node:url'
import { forkWorker } from '@scanauth/testkit'
import { REDIS_URL } from './redis'
import type { Job, PhaseReport } from './worker'

const workerPath = fileURLToPath(new URL('./worker.ts', import.meta.url))
const packageDir = fileURLToPath(new URL('../..', import.meta.url))

/** A running worker process. */
export interface WorkerProcess {
  /** Runs one phase and resolves with its report. */
  run(job: Exclude<Job, { phase: 'exit' }>): Promise<PhaseReport>
  /** Asks the worker to quit its client and exit, and waits until it has. */
  exit(): Promise<void>
}

/** Forks a worker on `prefix` (a Cluster's when `clusterPorts` is given) and resolves once it is ready. */
export async function startWorkerProcess(prefix: string, clusterPorts?: number[]): Promise<WorkerProcess> {
  const { handle, ready } = forkWorker<Job, PhaseReport>({
    path: workerPath,
    cwd: packageDir,
    execArgv: ['--import', 'tsx', '--conditions=@scanauth/source'],
    env: { REDIS_URL, SCANAUTH_PREFIX: prefix, ...(clusterPorts ? { SCANAUTH_CLUSTER_PORTS: clusterPorts.join(',') } : {}) },
    name: `worker on ${prefix}`,
  })
  await ready
  return {
    run: (job) => handle.run(job),
    async exit() {
      if (handle.child.exitCode !== null || handle.child.signalCode !== null) return
      handle.tell({ phase: 'exit' })
      await handle.exited
    },
  }
}
