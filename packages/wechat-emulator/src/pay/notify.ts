/**
 * Notifications the way WeChat Pay sends them: the `encrypt-resource` envelope with the resource
 * sealed under the APIv3 key, signed `Wechatpay-*` headers, up to 5 s for an answer, retries on a
 * (compressed) schedule until a 2xx, and the knobs that make it behave like WeChat on a bad day:
 * probe signatures first, duplicates, skewed timestamps, the previous key after a rotation.
 *
 * @module
 */
import { deliveryDeadline } from '../deadline'
import { randomInt } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { sealResource } from './aead'
import type { BackgroundWork } from './background'
import type { PlatformKey, PlatformKeys } from './keys'
import { randomDigits } from './orders'
import { signatureNonce, wechatpayHeaders } from './signature'
import { wechatTime } from './time'
import type { WechatPayEmulatorNotification, WechatPayKnobs } from './types'

/** WeChat's notification retry delays in seconds: 15s/15s/30s/3m/10m/20m/30m/30m/30m/60m/3h/3h/3h/6h/6h (about 24 h 4 min). */
export const WECHAT_PAY_RETRY_SCHEDULE_SECONDS: readonly number[] = Object.freeze([
  15, 15, 30, 180, 600, 1200, 1800, 1800, 1800, 3600, 10800, 10800, 10800, 21600, 21600,
])

/**
 * The emulator's default retry delays in milliseconds: {@link WECHAT_PAY_RETRY_SCHEDULE_SECONDS}
 * divided by 1000, i.e. each WeChat second becomes an emulator millisecond (15 ms, 15 ms, 30 ms, …,
 * 21.6 s; 86.6 s in all), so a test sees the whole sequence in a reasonable time.
 */
export const WECHAT_PAY_COMPRESSED_RETRY_SCHEDULE_MS: readonly number[] = Object.freeze([...WECHAT_PAY_RETRY_SCHEDULE_SECONDS])

/** The most notifications kept in the log, so a long-running dev emulator stays bounded. */
const LOG_LIMIT = 500

/** What a notification is about, before it is sealed. */
export interface NotificationEvent {
  eventType: 'TRANSACTION.SUCCESS' | 'REFUND.SUCCESS'
  summary: string
  originalType: 'transaction' | 'refund'
  /** The plaintext resource (the transaction, or the refund). */
  resource: Record<string, unknown>
  url: string
  outTradeNo: string
  outRefundNo: string | null
}

/** How notifications are sealed, signed and delivered. */
export interface NotifierSettings {
  apiV3Key: string
  keys: PlatformKeys
  knobs: () => WechatPayKnobs
  retrySchedule: readonly number[]
  timeoutMs: number
  now: () => number
  work: BackgroundWork
  /** Aborted when the emulator closes. */
  closed: AbortSignal
}

/** Sends notifications in the background and keeps the delivery log. */
export class Notifier {
  readonly #settings: NotifierSettings
  readonly #log: WechatPayEmulatorNotification[] = []

  constructor(settings: NotifierSettings) {
    this.#settings = settings
  }

  /** Starts sending `event` (probe, notification, duplicates, as the knobs say); returns at once. */
  send(event: NotificationEvent): void {
    this.#settings.work.run(() => this.#sequence(event))
  }

  /** Copies of the log entries, oldest first. */
  log(): WechatPayEmulatorNotification[] {
    return this.#log.map((entry) => ({ ...entry, attempts: entry.attempts.map((attempt) => ({ ...attempt })) }))
  }

  async #sequence(event: NotificationEvent): Promise<void> {
    // Knobs are read once per notification, so a change mid-retry does not mix behaviours.
    const knobs = { ...this.#settings.knobs() }
    const skew = knobs.timestampSkewSeconds
    const first = this.#envelope(event, knobs)
    if (knobs.probeFirst) await this.#deliver(this.#entry(event, first, 'probe', knobs), { probe: true, skew })
    const real = this.#entry(event, first, 'real', knobs)
    await this.#deliver(real, { probe: false, skew })
    if (real.state !== 'accepted') return
    if (knobs.duplicateSameId) await this.#deliver(this.#entry(event, first, 'duplicate-same-id', knobs), { probe: false, skew })
    if (knobs.duplicateNewId) await this.#deliver(this.#entry(event, this.#envelope(event, knobs), 'duplicate-new-id', knobs), { probe: false, skew })
  }

  /** A new envelope (new id, fresh GCM nonce) for `event`. */
  #envelope(event: NotificationEvent, knobs: WechatPayKnobs): { id: string; body: string } {
    const now = this.#settings.now()
    const id = `EV-${new Date(now).toISOString().slice(0, 10).replace(/-/g, '')}${randomDigits(13)}`
    const associatedData = knobs.emptyAssociatedData ? '' : event.originalType
    const { ciphertext, nonce } = sealResource(this.#settings.apiV3Key, JSON.stringify(event.resource), associatedData)
    const envelope = {
      id,
      create_time: wechatTime(now),
      resource_type: 'encrypt-resource',
      event_type: event.eventType,
      summary: event.summary,
      resource: { original_type: event.originalType, algorithm: 'AEAD_AES_256_GCM', ciphertext, associated_data: associatedData, nonce },
    }
    return { id, body: JSON.stringify(envelope) }
  }

  #entry(event: NotificationEvent, envelope: { id: string; body: string }, kind: WechatPayEmulatorNotification['kind'], knobs: WechatPayKnobs): WechatPayEmulatorNotification {
    const entry: WechatPayEmulatorNotification = {
      id: envelope.id,
      eventType: event.eventType,
      kind,
      url: event.url,
      outTradeNo: event.outTradeNo,
      outRefundNo: event.outRefundNo,
      serial: this.#signingKey(knobs).id,
      state: 'pending',
      attempts: [],
      body: envelope.body,
      resource: event.resource,
    }
    this.#log.push(entry)
    if (this.#log.length > LOG_LIMIT) this.#log.splice(0, this.#log.length - LOG_LIMIT)
    return entry
  }

  /** The current key, or (with the `previousKeyShare` knob, after a rotation) now and then the previous one. */
  #signingKey(knobs: WechatPayKnobs): PlatformKey {
    const previous = this.#settings.keys.previous()
    if (previous !== undefined && knobs.previousKeyShare > 0 && randomInt(0, 1_000_000) < knobs.previousKeyShare * 1_000_000) return previous
    return this.#settings.keys.current()
  }

  /** Delivers `entry` until accepted or the schedule is exhausted (a probe: once). */
  async #deliver(entry: WechatPayEmulatorNotification, options: { probe: boolean; skew: number }): Promise<void> {
    const { closed, retrySchedule } = this.#settings
    const key = this.#settings.keys.byId(entry.serial) ?? this.#settings.keys.current()
    for (let attempt = 0; ; attempt++) {
      if (closed.aborted) {
        entry.state = 'gave-up'
        return
      }
      const status = await this.#attempt(entry, key, options)
      if (options.probe) {
        // A probe is sent once; 2xx means the app accepted a forged signature.
        entry.state = status !== null && status >= 200 && status < 300 ? 'accepted' : 'refused'
        return
      }
      if (status !== null && status >= 200 && status < 300) {
        entry.state = 'accepted'
        return
      }
      const delay = retrySchedule[attempt]
      if (delay === undefined) {
        entry.state = 'gave-up'
        return
      }
      try {
        await sleep(delay, undefined, { signal: closed })
      } catch {
        entry.state = 'gave-up'
        return
      }
    }
  }

  /** One POST; resolves with the status, or null when no answer came in time. */
  async #attempt(entry: WechatPayEmulatorNotification, key: PlatformKey, { probe, skew }: { probe: boolean; skew: number }): Promise<number | null> {
    const { now, timeoutMs, closed } = this.#settings
    const record = { at: now(), status: null as number | null, error: null as string | null }
    entry.attempts.push(record)
    const body = Buffer.from(entry.body, 'utf8')
    const timestamp = Math.floor(now() / 1000) + skew
    const deadline = deliveryDeadline(timeoutMs, closed)
    try {
      const response = await fetch(entry.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: '*/*',
          'user-agent': 'Mozilla/4.0 (scanauth WeChat Pay emulator)',
          'request-id': signatureNonce().toUpperCase(),
          ...wechatpayHeaders(body, key, timestamp, { probe }),
        },
        body,
        signal: deadline.signal,
      })
      // The whole answer must arrive in time, not only its status line.
      await response.arrayBuffer()
      record.status = response.status
      if (response.status < 200 || response.status >= 300) record.error = `HTTP ${response.status}`
      return response.status
    } catch (error) {
      record.error = closed.aborted ? 'the emulator closed' : error instanceof Error && error.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : `no answer: ${error instanceof Error ? error.message : String(error)}`
      return null
    } finally {
      deadline.done()
    }
  }
}
