/**
 * Idempotency keys (docs/behaviour.md, B-idem-1…6): a call repeated with the same key answers
 * what the first one answered and changes nothing; the same key with other parameters is refused.
 * Keys are global per store, so a grant's key cannot be reused for a consumption either.
 */
import { createHash } from 'node:crypto'
import { ScanAuthError } from '../errors'
import type { IdempotencyRecord } from '../store/records'

/**
 * A digest of an operation and its parameters. Secrets among them (a session token) never reach
 * the store in the clear: only this SHA-256 of the whole call is kept.
 */
export function fingerprintOf(operation: 'grant' | 'consume', parameters: readonly unknown[]): string {
  return createHash('sha256').update(JSON.stringify([operation, ...parameters])).digest('base64url')
}

/**
 * Whether a call with `fingerprint` is a repeat of the call recorded under its key: `true` for a
 * repeat, `false` when the key is unused. The same key used for another call throws
 * `idempotency_conflict` (409).
 */
export function isRepeat(record: IdempotencyRecord | null, fingerprint: string): record is IdempotencyRecord {
  if (record === null) return false
  if (record.fingerprint !== fingerprint) {
    throw new ScanAuthError('idempotency_conflict', `Idempotency key "${record.key}" was already used with other parameters`)
  }
  return true
}
