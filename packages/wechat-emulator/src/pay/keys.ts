/**
 * The RSA keys of the WeChat Pay emulator: its own platform keys (what WeChat signs with, generated
 * at start and on rotation, named `PUB_KEY_ID_…` or by a hex serial), and the merchants' public
 * keys it checks request signatures with.
 *
 * @module
 */
import { createPublicKey, generateKeyPair, randomBytes, randomInt, type KeyObject } from 'node:crypto'
import { promisify } from 'node:util'
import { WechatEmulatorError } from '../errors'
import type { WechatPayKeyMode, WechatPayMerchantKey } from './types'

const generateRsa = promisify(generateKeyPair)

/** A platform key: its id as `Wechatpay-Serial` shows it, and both halves. */
export interface PlatformKey {
  id: string
  privateKey: KeyObject
  publicKeyPem: string
}

/** A fresh RSA-2048 key pair (the size WeChat uses for both sides). */
async function rsaPair(): Promise<{ privateKey: KeyObject; publicKey: KeyObject }> {
  return generateRsa('rsa', { modulusLength: 2048 })
}

/** A hex certificate serial in WeChat's style: 40 upper-case hex digits. */
export function hexSerial(): string {
  return randomBytes(20).toString('hex').toUpperCase()
}

/**
 * A public-key id in WeChat's style: `PUB_KEY_ID_` and 34 digits. Real ids start with `01` and
 * carry the merchant id; only the shape matters to verifiers, which look keys up by the whole id.
 */
function publicKeyId(mchid: string): string {
  const digits = mchid.replace(/\D/g, '').slice(0, 12).padStart(12, '0')
  let tail = ''
  while (tail.length < 20) tail += String(randomInt(0, 10))
  return `PUB_KEY_ID_01${digits}${tail}`
}

/** The emulator's platform keys: the current one, and older ones kept after rotations. */
export class PlatformKeys {
  readonly #mode: WechatPayKeyMode
  readonly #mchid: string
  /** Oldest first; the last one is current. */
  readonly #keys: PlatformKey[] = []

  private constructor(mode: WechatPayKeyMode, mchid: string) {
    this.#mode = mode
    this.#mchid = mchid
  }

  /** A key ring with one freshly generated key. */
  static async create(mode: WechatPayKeyMode, mchid: string): Promise<PlatformKeys> {
    const ring = new PlatformKeys(mode, mchid)
    await ring.rotate(false)
    return ring
  }

  /** The key new answers and notifications are signed with. */
  current(): PlatformKey {
    return this.#keys[this.#keys.length - 1]!
  }

  /** The key before the current one, when it was kept. */
  previous(): PlatformKey | undefined {
    return this.#keys.length > 1 ? this.#keys[this.#keys.length - 2] : undefined
  }

  /** A kept key by id. */
  byId(id: string): PlatformKey | undefined {
    return this.#keys.find((key) => key.id === id)
  }

  /** Generates a new current key; the old ones are dropped when `retireOld`. Resolves with the new id. */
  async rotate(retireOld: boolean): Promise<string> {
    const { privateKey, publicKey } = await rsaPair()
    // 20 random digits or 160 random bits: a clash with a kept id is not worth a check.
    const id = this.#mode === 'public-key' ? publicKeyId(this.#mchid) : hexSerial()
    if (retireOld) this.#keys.length = 0
    this.#keys.push({ id, privateKey, publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() })
    return id
  }

  /** Public keys by id, oldest first (a fresh object each time). */
  verificationKeys(): Record<string, string> {
    return Object.fromEntries(this.#keys.map((key) => [key.id, key.publicKeyPem]))
  }
}

/** The merchant API keys the emulator accepts request signatures from, by merchant certificate serial. */
export class MerchantKeys {
  readonly #keys = new Map<string, KeyObject>()

  /** Registers `pem` (SPKI, PKCS#1 or a certificate) for `serial`; throws `code` for a bad one. */
  add(serial: string, pem: string, code: 'invalid_options' | 'invalid_argument', where: string): void {
    if (typeof serial !== 'string' || serial === '') throw new WechatEmulatorError(code, `${where}: the merchant certificate serial must be a non-empty string`)
    let key: KeyObject
    try {
      key = createPublicKey(pem)
    } catch (error) {
      throw new WechatEmulatorError(code, `${where}: the public key for serial ${serial} is not a PEM public key or certificate`, { cause: error })
    }
    if (key.asymmetricKeyType !== 'rsa') throw new WechatEmulatorError(code, `${where}: the key for serial ${serial} must be an RSA key`)
    // Serials are hex; WeChat compares them without regard to case.
    this.#keys.set(serial.toUpperCase(), key)
  }

  /** The key for `serial`, if registered. */
  get(serial: string): KeyObject | undefined {
    return this.#keys.get(serial.toUpperCase())
  }

  /** Every registered key: a cashier's `paySign` names no serial, so any of the merchant's keys may have made it. */
  all(): KeyObject[] {
    return [...this.#keys.values()]
  }

  /** Generates a merchant key pair, registers its public half, and returns it for the test to sign with. */
  async generate(): Promise<WechatPayMerchantKey> {
    const { privateKey, publicKey } = await rsaPair()
    const serial = hexSerial()
    this.#keys.set(serial, publicKey)
    return {
      serial,
      privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    }
  }
}
