/**
 * A second Node process for the change-notification tests: `worker.ts` forked on a prefix (on the
 * one server, or on a Cluster when given its ports), driven one phase at a time over IPC.
 */
import { fork } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
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

type Message = { ready?: true; ok?: boolean; report?: PhaseReport; error?: string }

/** Forks a worker on `prefix` (a Cluster's when `clusterPorts` is given) and resolves once it is ready. */
export async function startWorkerProcess(prefix: string, clusterPorts?: number[]): Promise<WorkerProcess> {
  const child = fork(workerPath, [], {
    cwd: packageDir,
    execArgv: ['--import', 'tsx', '--conditions=@scanauth/source'],
    env: { ...process.env, REDIS_URL, SCANAUTH_PREFIX: prefix, ...(clusterPorts ? { SCANAUTH_CLUSTER_PORTS: clusterPorts.join(',') } : {}) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const exited = once(child, 'exit')
  const ready = new Promise<void>((resolve, reject) => {
    child.once('message', (message: Message) => (message.ready ? resolve() : reject(new Error(`worker said ${JSON.stringify(message)}`))))
    void exited.then(([code]) => reject(new Error(`worker exited with ${code} before it was ready`)))
  })
  await ready
  return {
    run: (job) =>
      new Promise<PhaseReport>((resolve, reject) => {
        child.once('message', (message: Message) => (message.ok ? resolve(message.report as PhaseReport) : reject(new Error(message.error))))
        child.send(job)
      }),
    async exit() {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.send({ phase: 'exit' } satisfies Job)
      await exited
    },
  }
}
