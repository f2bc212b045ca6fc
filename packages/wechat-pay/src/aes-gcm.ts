/**
 * `AEAD_AES_256_GCM`, the encryption of notification resources (and platform certificates): key =
 * the APIv3 key as its 32 ASCII bytes (not hex- or base64-decoded), IV = the resource nonce as
 * UTF-8, AAD = `associated_data` (empty when absent), ciphertext = base64 of encrypted ‖ 16-byte tag.
 *
 * @module
 */
import { createCipheriv, createDecipheriv } from 'node:crypto'
import { isStrictBase64 } from './base64'
import { WechatPayError } from './errors'

/** The resource algorithm WeChat Pay uses. */
export const RESOURCE_ALGORITHM = 'AEAD_AES_256_GCM'

const TAG_BYTES = 16

/**
 * The APIv3 key's bytes, refusing anything but 32 printable ASCII characters. A 16-byte key would
 * silently select AES-128 in some libraries; the APIv2 key or a hex string are the usual mix-ups.
 */
export function apiV3KeyBytes(apiV3Key: string, code: 'invalid_options' | 'invalid_argument' = 'invalid_argument'): Buffer {
  if (typeof apiV3Key !== 'string' || !/^[\x21-\x7e]{32}$/.test(apiV3Key)) {
    const length = typeof apiV3Key === 'string' ? Buffer.byteLength(apiV3Key, 'utf8') : 0
    throw new WechatPayError(
      code,
      `apiV3Key must be the 32-character APIv3 key set in the merchant platform (got ${length} bytes${length === 32 ? ' with non-ASCII or blank characters' : ''})`,
    )
  }
  return Buffer.from(apiV3Key, 'ascii')
}

/** One encrypted resource. */
export interface AesGcmInput {
  /** The merchant's APIv3 key, 32 ASCII characters. */
  apiV3Key: string
  /** `resource.nonce` (12 characters from WeChat Pay). */
  nonce: string
  /** `resource.associated_data`; `""` or undefined for none. */
  associatedData?: string | undefined
}

function checkNonce(nonce: string): Buffer {
  if (typeof nonce !== 'string' || nonce === '') throw new WechatPayError('invalid_argument', 'the AES-GCM nonce is empty')
  return Buffer.from(nonce, 'utf8')
}

/**
 * Decrypts a resource's `ciphertext` (base64). Throws `decryption_failed` when the tag does not
 * verify (wrong APIv3 key, altered ciphertext, AAD or nonce) or the ciphertext is not base64 of at
 * least a tag; `invalid_argument` for a key that is not 32 ASCII bytes.
 */
export function decryptAesGcm(input: AesGcmInput & { ciphertext: string }): Buffer {
  return decryptWithKey(apiV3KeyBytes(input.apiV3Key), input)
}

/** {@link decryptAesGcm} with the APIv3 key's bytes checked beforehand (by {@link apiV3KeyBytes}, once). */
export function decryptWithKey(key: Buffer, input: Omit<AesGcmInput, 'apiV3Key'> & { ciphertext: string }): Buffer {
  const iv = checkNonce(input.nonce)
  const data = isStrictBase64(input.ciphertext) ? Buffer.from(input.ciphertext, 'base64') : undefined
  if (data === undefined || data.length < TAG_BYTES) {
    throw new WechatPayError('decryption_failed', 'the resource ciphertext is not base64 of an AES-GCM ciphertext and tag')
  }
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES })
    decipher.setAAD(Buffer.from(input.associatedData ?? '', 'utf8'))
    decipher.setAuthTag(data.subarray(data.length - TAG_BYTES))
    return Buffer.concat([decipher.update(data.subarray(0, data.length - TAG_BYTES)), decipher.final()])
  } catch (error) {
    throw new WechatPayError('decryption_failed', 'AES-256-GCM refused the resource: check the APIv3 key (apiV3Key)', { cause: error })
  }
}

/**
 * Encrypts as WeChat Pay does, answering the base64 `ciphertext` (encrypted ‖ tag). For code that
 * plays WeChat Pay's side: emulators and tests.
 */
export function encryptAesGcm(input: AesGcmInput & { plaintext: Uint8Array | string }): string {
  const key = apiV3KeyBytes(input.apiV3Key)
  const cipher = createCipheriv('aes-256-gcm', key, checkNonce(input.nonce), { authTagLength: TAG_BYTES })
  cipher.setAAD(Buffer.from(input.associatedData ?? '', 'utf8'))
  const plaintext = typeof input.plaintext === 'string' ? Buffer.from(input.plaintext, 'utf8') : input.plaintext
  return Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]).toString('base64')
}
