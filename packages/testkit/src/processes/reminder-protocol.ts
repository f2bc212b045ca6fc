/**
 * What the parent and the worker processes of the reminder tests ({@link describeReminderProcesses},
 * {@link serveReminderWorker}) say to each other, and what a worker's notifier writes down for every
 * message it delivers.
 *
 * A message is written to the worker's own log file (one JSON line, appended synchronously) at the
 * moment its send completes, before the notifier answers `sent`: a worker killed at any point leaves
 * every message it delivered in its file, so the parent counts what went out across processes, the
 * killed one's included, and not only what the survivors reported.
 *
 * @module
 */
import type { SendRemindersResult } from '@scanauth/core'

/** The leads every reminder worker and test use, in days. */
export const REMINDER_LEADS = [3, 1] as const

/** One message a worker's notifier delivered, as written in its log file. */
export interface SentReminder {
  /** The worker that delivered it. */
  worker: number
  /** The person's openid. */
  openid: string
  /** Their user id. */
  userId: number
  /** The lead it was for, in days. */
  leadDays: number | null
  /** When access ends, as the message said (ISO 8601). */
  endsAt: string | null
}

/** Parent → worker. */
export type ReminderCommand =
  | {
      /** One `auth.sendReminders({ now })` pass; report its result and the messages it delivered. */
      kind: 'pass'
      /** The time of the pass, epoch milliseconds. */
      now: number
      /** How long each send takes before the message is out (a slow channel), ms. Default 0. */
      delayMs?: number
    }
  | {
      /** Close the store and exit with code 0. */
      kind: 'exit'
    }

/** Worker → parent: what one pass did. */
export interface ReminderReport {
  /** What `sendReminders` answered. */
  result: SendRemindersResult
  /** The messages this pass delivered (also in the worker's log file). */
  sent: number
}

/**
 * The environment a worker reads besides its store's: its number and the folder of the log files,
 * set by {@link describeReminderProcesses}.
 */
export const REMINDER_ENV = {
  /** The worker's number (0, 1, …). */
  worker: 'SCANAUTH_REMINDER_WORKER',
  /** The folder the workers' log files go to, `worker-<n>.jsonl`. */
  logDir: 'SCANAUTH_REMINDER_LOG_DIR',
} as const

/** The log file of worker `worker` under `dir`. */
export const reminderLogFile = (dir: string, worker: number): string => `${dir}/worker-${worker}.jsonl`
