/**
 * Replay and duplicate records of the WeChat callback, kept in the application's `Store` so every
 * instance shares them (docs/behaviour.md, "The WeChat callback").
 *
 * Three kinds of record, each a Store counter (`incrementCounter` is atomic across processes, so of
 * two instances that race, exactly one sees the count 1):
 *
 * - `wx:req:<appId>:<timestamp>:<nonce>:<sha256>`: this exact request (method and body) was seen
 *   (B-wx-4). A second sighting is WeChat resending the same request.
 * - `wx:nonce:<appId>:<timestamp>:<nonce>`: the signed pair was used (B-wx-5). A second, different
 *   request under it is a replay with a forged body.
 * - `wx:event:<appId>:<sha256>`: this event was delivered (B-wx-6), whatever query carried it.
 *
 * The AppID is in every key because the signature is per account: two accounts sharing one store
 * must not refuse each other's nonces. User-supplied text never appears in a key except the nonce
 * and timestamp, whose alphabets `authenticate` restricts (B-wx-1); bodies and events are hashed.
 *
 * @module
 */
import { createHash } from 'node:crypto'
import type { Store } from '@scanauth/core'

/** The two Store primitives the records need. */
export type CounterStore = Pick<Store, 'incrementCounter' | 'deleteCounter'>

/** What the records say about a signed request (B-wx-4, B-wx-5). */
export type RequestVerdict =
  /** First sighting: go on. */
  | 'first'
  /** The same request again (WeChat's retry): do not process it again. */
  | 'repeat'
  /** The signed pair was already used by another request: refuse it (403). */
  | 'reused'

/** A signed request as the records see it. */
export interface SignedRequest {
  timestamp: string
  nonce: string
  method: string
  /** The raw body (the `echostr` for a GET: the only part of a GET that varies). */
  payload: Uint8Array | string
}

/** The keys written for one delivery, deleted together when its processing fails (B-wx-8). */
export type RecordKeys = string[]

/** Hex SHA-256. */
function sha256(...parts: Array<Uint8Array | string>): string {
  const hash = createHash('sha256')
  for (const part of parts) hash.update(part)
  return hash.digest('hex')
}

/** The key of one exact request: the signed pair plus a digest of method and body. */
export function requestKey(appId: string, request: SignedRequest): string {
  const digest = sha256(request.method, '\n', request.payload)
  return `wx:req:${appId}:${request.timestamp}:${request.nonce}:${digest}`
}

/** The key of a signed (timestamp, nonce) pair. */
export function nonceKey(appId: string, timestamp: string, nonce: string): string {
  return `wx:nonce:${appId}:${timestamp}:${nonce}`
}

/** The key of one event, from its delivery identity (see `deliveryKey`), hashed to a fixed length. */
export function eventKey(appId: string, deliveryKey: string): string {
  return `wx:event:${appId}:${sha256(deliveryKey)}`
}

/** The records of one callback: one account in one store, on the callback's clock. */
export class ReplayRecords {
  readonly #store: CounterStore
  readonly #appId: string
  readonly #ttlMs: number
  readonly #now: () => number

  constructor(options: { store: CounterStore; appId: string; ttlMs: number; now: () => number }) {
    this.#store = options.store
    this.#appId = options.appId
    this.#ttlMs = options.ttlMs
    this.#now = options.now
  }

  /** Adds one to `key`, expiring with the records' lifetime (B-wx-7). */
  #count(key: string): Promise<number> {
    const now = this.#now()
    return this.#store.incrementCounter(key, now + this.#ttlMs, now)
  }

  /**
   * Records a signed request and says whether it is new, a repeat of itself, or a second request
   * under a used pair. The request record comes first and the pair is counted only for a request
   * never seen before: two copies of one request racing on two instances then count the pair once,
   * so neither is mistaken for a forgery. A forgery's own request record is deleted again, so
   * forged bodies leave nothing behind.
   *
   * @returns the verdict and the keys this request now owns (for {@link ReplayRecords.forget}).
   */
  async claimRequest(request: SignedRequest): Promise<{ verdict: RequestVerdict; keys: RecordKeys }> {
    const sent = requestKey(this.#appId, request)
    if ((await this.#count(sent)) > 1) return { verdict: 'repeat', keys: [] }
    const pair = nonceKey(this.#appId, request.timestamp, request.nonce)
    let uses: number
    try {
      uses = await this.#count(pair)
    } catch (error) {
      // Left behind, the request record would make WeChat's retry look like a repeat (B-wx-8).
      await this.forget([sent]).catch(() => undefined)
      throw error
    }
    if (uses > 1) {
      await this.#store.deleteCounter(sent)
      return { verdict: 'reused', keys: [] }
    }
    return { verdict: 'first', keys: [sent, pair] }
  }

  /**
   * Records the delivery of an event; true the first time (B-wx-6).
   *
   * @returns whether this is the first delivery, and the key written.
   */
  async claimEvent(deliveryKey: string): Promise<{ first: boolean; key: string }> {
    const key = eventKey(this.#appId, deliveryKey)
    return { first: (await this.#count(key)) === 1, key }
  }

  /** Deletes records, so WeChat's retry of a failed delivery is processed again (B-wx-8). */
  async forget(keys: RecordKeys): Promise<void> {
    await Promise.all(keys.map((key) => this.#store.deleteCounter(key)))
  }
}
