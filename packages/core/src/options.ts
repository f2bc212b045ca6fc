/**
 * Options of `createScanAuth`, parsed once with zod; defaults live here and nowhere else.
 *
 * @module
 */
import { z } from 'zod'
import { ScanAuthError } from './errors'
import type { QrProvider } from './qr'
import type { Store } from './store'
import type { ScanEvent, ActivationEvent } from './hooks'

const hasMethods = (...names: string[]) => (value: unknown) =>
  typeof value === 'object' && value !== null && names.every((n) => typeof (value as Record<string, unknown>)[n] === 'function')

const optionsSchema = z.object({
  store: z.custom<Store>(hasMethods('load', 'commit', 'listLedger', 'endSessions', 'watchScenes'), {
    error: 'store must implement load(), commit(), listLedger(), endSessions() and watchScenes()',
  }),
  qr: z.custom<QrProvider>(hasMethods('createQr'), { error: 'qr must implement createQr()' }),
  sceneTtlSeconds: z.number().int().positive().max(2_592_000).default(300),
  // At most 100 years, so every expiry stays a valid date.
  sessionTtlHours: z.number().positive().max(100 * 365.25 * 24).default(168),
  freeTrialDays: z.number().positive().max(100 * 365.25).default(7),
  now: z.custom<() => number>((v) => typeof v === 'function', { error: 'now must be a function' }).default(() => Date.now),
  hooks: z.custom<ScanAuthHooks>((v) => typeof v === 'object' && v !== null, { error: 'hooks must be an object' }).default(() => ({})),
})

/** Optional callbacks for logging and metrics, called after a change is committed. */
export interface ScanAuthHooks {
  /** A scan was handled (any result). */
  onScan?(event: ScanEvent): void
  /** An authorization became active. */
  onActivate?(event: ActivationEvent): void
  /** A hook threw; the operation itself has already succeeded. Without it, hook errors are ignored. */
  onHookError?(error: unknown): void
}

/** Options of `createScanAuth`. */
export interface ScanAuthOptions {
  /** Where scenes, users, authorizations and sessions live: `MemoryStore`, `SqliteStore`, `RedisStore`. */
  store: Store
  /** Creates the scannable code, e.g. `createWechatQrProvider` from `@scanauth/wechat`. */
  qr: QrProvider
  /** Scene (QR code) lifetime in seconds. Default 300. */
  sceneTtlSeconds?: number
  /** Session lifetime in hours. Default 168 (7 days). */
  sessionTtlHours?: number
  /** Length of the one free trial per user, in days. Default 7. */
  freeTrialDays?: number
  /** The clock, in epoch milliseconds. Default `Date.now`. Tests drive time through it. */
  now?: () => number
  /** Optional callbacks. */
  hooks?: ScanAuthHooks
}

/** Options after parsing: every default filled in. */
export type ResolvedOptions = z.infer<typeof optionsSchema>

/** Parses and completes the options, or throws a `ScanAuthError` `invalid_options` naming the bad one. */
export function resolveOptions(options: ScanAuthOptions): ResolvedOptions {
  const result = optionsSchema.safeParse(options)
  if (result.success) return result.data
  const issue = result.error.issues[0]
  throw new ScanAuthError('invalid_options', `createScanAuth: ${issue ? `${issue.path.join('.')}: ${issue.message}` : 'invalid options'}`)
}
