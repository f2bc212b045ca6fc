/**
 * The parent side of a multi-process test: a worker process forked with IPC, driven one phase at a
 * time. A store's own tests define what a phase is (the command) and what a worker answers (the
 * report); this module only carries them, so every store's race and crash tests talk to their
 * workers the same way.
 *
 * The worker's side of the protocol: send `{ kind: 'ready' }` once it can take commands, then for
 * each command one `{ kind: 'done', report }`, or `{ kind: 'failed', error }`; a long-running phase
 * may send `{ kind: 'progress', count }` now and then (the operations done so far).
 *
 * @module
 */
import { fork, type ChildProcess } from 'node:child_process'

/** Worker → parent. */
export type WorkerReply<Report> =
  | {
      /** It can take commands. */ kind: 'ready'
    }
  | {
      /** A command is done. */ kind: 'done'
      /** The worker's answer to it. */ report: Report
    }
  | {
      /** A long phase goes on. */ kind: 'progress'
      /** The operations done so far. */ count: number
    }
  | {
      /** A command failed. */ kind: 'failed'
      /** Why, as the worker says it. */ error: string
    }

/** How a worker process ended. */
export interface WorkerExit {
  /** Its exit code, null when a signal ended it. */
  code: number | null
  /** The signal that ended it, null when it exited by itself. */
  signal: NodeJS.Signals | null
}

/** A forked worker, seen from the parent. */
export interface WorkerHandle<Command, Report> {
  /** The worker's process. */
  child: ChildProcess
  /** Sends a command and resolves with the worker's report (rejects if it fails or exits first). */
  run(command: Command): Promise<Report>
  /** Sends a command that has no answer (a `stop`, an `exit`). */
  tell(command: Command): void
  /** Resolves once the worker has reported at least `count` operations done. */
  progressed(count: number): Promise<void>
  /** The operations the worker has reported done so far. */
  progress(): number
  /** Resolves when the process has exited. */
  exited: Promise<WorkerExit>
}

/** Where and how to fork a worker. */
export interface ForkWorkerOptions {
  /** The worker's module. */
  path: string
  /** Node options for it, e.g. `['--import', 'tsx']` for a TypeScript worker. Default none. */
  execArgv?: string[]
  /** Its working directory. */
  cwd: string
  /** Its arguments. */
  args?: string[]
  /** Added to the parent's environment. */
  env?: Record<string, string>
  /** How failures name it, e.g. `worker 2`. */
  name: string
}

/**
 * Forks a worker. `ready` resolves once it says so. A worker that exits (killed, crashed) fails
 * whatever the parent is waiting for, and every later `run` or `progressed`.
 */
export function forkWorker<Command, Report>(options: ForkWorkerOptions): {
  /** The worker, to drive. */ handle: WorkerHandle<Command, Report>
  /** Resolves once it says `ready`. */ ready: Promise<void>
} {
  const child = fork(options.path, options.args ?? [], {
    cwd: options.cwd,
    execArgv: options.execArgv ?? [],
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const exited = new Promise<WorkerExit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })))
  let failure: Error | null = null
  let done = 0
  let pending: { resolve(report: Report): void; reject(error: Error): void } | null = null
  const progressWaiters = new Set<{ count: number; resolve(): void; reject(error: Error): void }>()
  let becomeReady!: () => void
  let neverReady!: (error: Error) => void
  const ready = new Promise<void>((resolve, reject) => ((becomeReady = resolve), (neverReady = reject)))

  const fail = (error: Error) => {
    failure = error
    neverReady(error)
    pending?.reject(error)
    pending = null
    for (const w of progressWaiters) w.reject(error)
    progressWaiters.clear()
  }
  child.on('message', (reply: WorkerReply<Report>) => {
    if (reply.kind === 'ready') becomeReady()
    else if (reply.kind === 'done') {
      pending?.resolve(reply.report)
      pending = null
    } else if (reply.kind === 'progress') {
      done = reply.count
      for (const w of progressWaiters) {
        if (w.count > done) continue
        progressWaiters.delete(w)
        w.resolve()
      }
    } else fail(new Error(`${options.name}: ${reply.error}`))
  })
  void exited.then(({ code, signal }) => fail(new Error(`${options.name} exited (code ${code}, signal ${signal})`)))

  const handle: WorkerHandle<Command, Report> = {
    child,
    exited,
    run(command) {
      if (failure) return Promise.reject(failure)
      return new Promise<Report>((resolve, reject) => {
        pending = { resolve, reject }
        child.send(command as object)
      })
    },
    tell(command) {
      child.send(command as object)
    },
    progressed(count) {
      if (failure) return Promise.reject(failure)
      if (done >= count) return Promise.resolve()
      return new Promise<void>((resolve, reject) => progressWaiters.add({ count, resolve, reject }))
    },
    progress: () => done,
  }
  return { handle, ready }
}
