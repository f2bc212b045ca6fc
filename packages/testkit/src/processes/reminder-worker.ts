/**
 * The worker side of {@link describeReminderProcesses}: one process with its own store connection
 * and its own `createScanAuth` with `reminders`, whose notifier appends every message it delivers to
 * the worker's log file, driven over IPC in `forkWorker`'s protocol. A store package's worker module
 * is one call to {@link serveReminderWorker} with the way to open its store.
 *
 * @module
 */
import { appendFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { createScanAuth, type ReminderDelivery, type ReminderMessage, type ReminderNotifier } from '@scanauth/core'
import type { WorkerStore } from './payment-worker'
import { REMINDER_ENV, REMINDER_LEADS, reminderLogFile, type ReminderCommand, type ReminderReport, type SentReminder } from './reminder-protocol'
import type { WorkerReply } from './worker-process'

/** What a store package's reminder worker module supplies. */
export interface ReminderWorkerOptions {
  /**
   * Opens this process's own store on the test's backing data, named by the environment the
   * parent's `ReminderBacking.env` put there; `close` releases what it opened (a client, a pool).
   */
  openStore(env: NodeJS.ProcessEnv): Promise<WorkerStore> | WorkerStore
}

/**
 * A notifier that delivers by writing the message down: after `delayMs()` (a slow channel), one
 * JSON line appended synchronously to `file`, then `sent` on `template`. No subscription and no
 * channels it could report unreachable, so a pass costs the store only the claim and the outcome.
 */
class LoggingNotifier implements ReminderNotifier {
  constructor(
    private readonly worker: number,
    private readonly file: string,
    private readonly delayMs: () => number,
    private readonly delivered: () => void,
  ) {}

  async send(message: ReminderMessage): Promise<ReminderDelivery> {
    const delay = this.delayMs()
    if (delay > 0) await sleep(delay)
    const line: SentReminder = { worker: this.worker, openid: message.openid, userId: message.userId, leadDays: message.leadDays, endsAt: message.endsAt }
    appendFileSync(this.file, `${JSON.stringify(line)}\n`)
    this.delivered()
    return { outcome: 'sent', channel: 'template' }
  }
}

/**
 * Runs this process as a reminder worker: opens the store, answers `ready`, then carries out each
 * {@link ReminderCommand} and answers its {@link ReminderReport}; after every message delivered it
 * sends `progress` with the messages this process delivered so far.
 *
 * @example
 * ```ts
 * // test/workers/reminder-worker.ts of a store package
 * import { serveReminderWorker } from '@scanauth/testkit'
 * import { MyStore } from '../../src/index'
 *
 * await serveReminderWorker({
 *   openStore: (env) => {
 *     const store = new MyStore({ location: env.MY_STORE_LOCATION as string })
 *     return { store, close: () => store.close() }
 *   },
 * })
 * ```
 */
export async function serveReminderWorker(options: ReminderWorkerOptions): Promise<void> {
  const worker = Number(process.env[REMINDER_ENV.worker])
  const logDir = process.env[REMINDER_ENV.logDir]
  if (!Number.isInteger(worker) || logDir === undefined) {
    throw new Error(`serveReminderWorker: ${REMINDER_ENV.worker} and ${REMINDER_ENV.logDir} are not set (fork it through describeReminderProcesses)`)
  }
  const send = (reply: WorkerReply<ReminderReport>) => process.send?.(reply)

  let delayMs = 0
  let total = 0
  let inPass = 0
  const notifier = new LoggingNotifier(worker, reminderLogFile(logDir, worker), () => delayMs, () => {
    total++
    inPass++
    send({ kind: 'progress', count: total })
  })
  const { store, close } = await options.openStore(process.env)
  const auth = createScanAuth({
    store,
    qr: { createQr: async () => ({ url: 'https://qr.example.test/reminder-worker' }) },
    rateLimits: false,
    reminders: { leadDays: [...REMINDER_LEADS], notifier, url: 'https://app.example.test/auth/m/' },
  })

  async function handle(command: ReminderCommand): Promise<void> {
    switch (command.kind) {
      case 'pass': {
        delayMs = command.delayMs ?? 0
        inPass = 0
        const result = await auth.sendReminders({ now: command.now })
        return void send({ kind: 'done', report: { result, sent: inPass } })
      }
      case 'exit':
        await close()
        process.exit(0)
    }
  }

  process.on('message', (command: ReminderCommand) => {
    handle(command).catch((error: unknown) => send({ kind: 'failed', error: error instanceof Error ? (error.stack ?? error.message) : String(error) }))
  })
  send({ kind: 'ready' })
}
