/**
 * The keys that prove an answer or a notification is WeChat Pay's, by the id WeChat Pay names in
 * `Wechatpay-Serial`: a platform certificate serial (hex) or a public key id (`PUB_KEY_ID_…`). One
 * map covers platform-certificate mode, public-key mode and the migration between them, during
 * which WeChat Pay signs notifications with either key at a ratio it ramps up: hold both.
 *
 * @module
 */
import { createPrivateKey, createPublicKey, KeyObject, X509Certificate } from 'node:crypto'
import { WechatPayError } from './errors'

/** A verification key as configured: a PEM public key, an X.509 certificate PEM, or a `KeyObject`. */
export type VerificationKeyInput = string | Buffer | KeyObject

/**
 * The verification keys as configured, by serial: `{ '5157F45F2ACD8E2B': platformCertPem,
 * 'PUB_KEY_ID_0114…': publicKeyPem }`. Hex serials match case-insensitively, public key ids exactly.
 */
export type VerificationKeys = Readonly<Record<string, VerificationKeyInput>>

/** The public key id prefix of WeChat Pay's public-key mode; ids with it are matched exactly. */
export const PUBLIC_KEY_ID_PREFIX = 'PUB_KEY_ID_'

/**
 * Verification keys parsed once: what the client and the notification parser use. Build it with
 * {@link createVerificationKeySet}, or pass the plain {@link VerificationKeys} record and let them.
 */
export interface VerificationKeySet {
  /** The public key for a `Wechatpay-Serial`, or undefined when none is configured. */
  get(serial: string): KeyObject | undefined
  /** The configured serials, normalized (hex serials upper-case). */
  readonly serials: readonly string[]
}

/**
 * Hex serials arrive upper-case from WeChat Pay but are often pasted lower-case; anything else (a
 * public key id) is taken as it is: `pub_key_id_…` is not `PUB_KEY_ID_…`.
 */
function normalizeSerial(serial: string): string {
  const trimmed = serial.trim()
  return /^[0-9A-Fa-f]+$/.test(trimmed) ? trimmed.toUpperCase() : trimmed
}

/** Parses one configured key; refuses private keys (a merchant key in the wrong slot verifies nothing of WeChat's). */
function toPublicKey(serial: string, input: VerificationKeyInput): KeyObject {
  if (input instanceof KeyObject) {
    if (input.type !== 'public') {
      throw new WechatPayError('invalid_options', `verificationKeys["${serial}"]: expected a public key, got a ${input.type} key`)
    }
    return input
  }
  const pem = typeof input === 'string' ? input : input.toString('utf8')
  if (pem.includes('PRIVATE KEY-----')) {
    throw new WechatPayError('invalid_options', `verificationKeys["${serial}"] is a private key; give WeChat Pay's platform certificate or public key`)
  }
  try {
    if (pem.includes('-----BEGIN CERTIFICATE-----')) {
      const certificate = new X509Certificate(pem)
      // A platform certificate filed under another serial is a paste error that would otherwise
      // surface only as "unknown serial" on the first notification.
      if (!serial.startsWith(PUBLIC_KEY_ID_PREFIX) && certificate.serialNumber.toUpperCase() !== serial) {
        throw new WechatPayError('invalid_options', `verificationKeys["${serial}"] is the certificate of serial ${certificate.serialNumber}`)
      }
      return certificate.publicKey
    }
    return createPublicKey(pem)
  } catch (error) {
    if (error instanceof WechatPayError) throw error
    throw new WechatPayError('invalid_options', `verificationKeys["${serial}"] is not a PEM public key or certificate`, { cause: error })
  }
}

/**
 * Parses a {@link VerificationKeys} record once. Throws `invalid_options` for an empty map, a key
 * that is not a public key or certificate, or a certificate filed under another serial.
 */
export function createVerificationKeySet(keys: VerificationKeys): VerificationKeySet {
  const parsed = new Map<string, KeyObject>()
  for (const [serial, input] of Object.entries(keys ?? {})) {
    const normalized = normalizeSerial(serial)
    if (normalized === '') throw new WechatPayError('invalid_options', 'verificationKeys: a serial is empty')
    parsed.set(normalized, toPublicKey(normalized, input))
  }
  if (parsed.size === 0) {
    throw new WechatPayError('invalid_options', 'verificationKeys: give at least one WeChat Pay platform certificate or public key')
  }
  return {
    get: (serial) => parsed.get(normalizeSerial(serial)),
    serials: [...parsed.keys()],
  }
}

/** True for an already parsed set (duck-typed: it may come from another copy of this package). */
function isKeySet(keys: VerificationKeys | VerificationKeySet): keys is VerificationKeySet {
  const candidate = keys as Partial<VerificationKeySet>
  return typeof candidate.get === 'function' && Array.isArray(candidate.serials)
}

/** The parsed set of either form of the option. */
export function toVerificationKeySet(keys: VerificationKeys | VerificationKeySet): VerificationKeySet {
  if (keys === undefined || keys === null) throw new WechatPayError('invalid_options', 'verificationKeys is required')
  return isKeySet(keys) ? keys : createVerificationKeySet(keys)
}

/** The merchant's API private key (`apiclient_key.pem`) as a `KeyObject`; `invalid_options` otherwise. */
export function toMerchantPrivateKey(input: string | Buffer | KeyObject): KeyObject {
  if (input instanceof KeyObject) {
    if (input.type !== 'private') throw new WechatPayError('invalid_options', 'merchantPrivateKey must be a private key')
    return input
  }
  try {
    return createPrivateKey(input)
  } catch (error) {
    throw new WechatPayError('invalid_options', 'merchantPrivateKey is not a PEM private key (apiclient_key.pem)', { cause: error })
  }
}
