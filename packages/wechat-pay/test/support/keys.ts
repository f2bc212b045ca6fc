// Keys for the tests, generated at load time (RSA-2048, as WeChat Pay uses), plus one self-signed
// platform certificate made with openssl for this repository (test/fixtures; its key is test-only).
import { generateKeyPairSync, type KeyObject } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

export interface TestKeyPair {
  privateKey: KeyObject
  publicKey: KeyObject
  publicPem: string
  privatePem: string
}

export function rsaKeyPair(): TestKeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  return {
    privateKey,
    publicKey,
    publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  }
}

const fixtures = join(import.meta.dirname, '..', 'fixtures')
/** The fixture platform certificate's serial, as `openssl x509 -serial` prints it. */
export const FIXTURE_CERT_SERIAL = '5157F45F2ACD8E2B'
export const fixtureCertPem = readFileSync(join(fixtures, 'platform-cert.pem'), 'utf8')
export const fixtureCertKeyPem = readFileSync(join(fixtures, 'platform-key.pem'), 'utf8')

/** The merchant's API key pair and WeChat Pay's two keys: a platform certificate and a public key. */
export const merchant = rsaKeyPair()
export const MERCHANT_SERIAL = '1DDE55AD98ED71D6EDD4A4A16996DE7B47773A8C'
export const platform = rsaKeyPair()
export const PLATFORM_SERIAL = '3A7B1C2D4E5F60718293A4B5C6D7E8F901234567'
export const payPublicKey = rsaKeyPair()
export const PUB_KEY_ID = 'PUB_KEY_ID_0114232134912410000000000000000001'
/** A key WeChat Pay does not hold: signatures made with it must fail. */
export const stranger = rsaKeyPair()

export const MCHID = '1230000109'
export const APPID = 'wxd678efh567hg6787'
export const API_V3_KEY = 'scanauthTestApiV3Key000000000001'
