// The WeChat Pay half of the shared configuration (examples/shared/src/pay-config.ts): every
// WECHATPAY_* variable, SCANAUTH_PLANS and SCANAUTH_RECONCILE_MINUTES, their defaults, and the
// ConfigError each mistake stops the start with. Key files are real files in a temporary folder.
import { generateKeyPairSync } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ConfigError, configFromEnv, DEFAULT_PLANS } from '@scanauth/example-shared'

const dir = mkdtempSync(join(tmpdir(), 'scanauth-pay-config-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } })
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256', publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } })
const file = (name: string, text: string) => {
  const path = join(dir, name)
  writeFileSync(path, text)
  return path
}
const KEY_FILE = file('apiclient_key.pem', rsa.privateKey)
const PUB_FILE = file('pub_key.pem', rsa.publicKey)
const API_V3_KEY = 'abcdefghijklmnopqrstuvwxyz012345'
const PUB_KEY_ID = 'PUB_KEY_ID_0114232134912410000000000000'
const SERIAL = '1DDE55AD98ED71D6EDD4A4A16996DE7B47773A8C'

/** A complete merchant configuration; each test changes one thing. */
const MERCHANT = {
  WECHATPAY_MCHID: '1230000109',
  WECHATPAY_APPID: 'wxd678efh567hg6787',
  WECHATPAY_API_V3_KEY: API_V3_KEY,
  WECHATPAY_PRIVATE_KEY_FILE: KEY_FILE,
  WECHATPAY_CERT_SERIAL: SERIAL,
  WECHATPAY_PUBLIC_KEY_FILE: PUB_FILE,
  WECHATPAY_PUBLIC_KEY_ID: PUB_KEY_ID,
}

/** The message of the ConfigError `env` stops the start with. */
function refusal(env: NodeJS.ProcessEnv): string {
  try {
    configFromEnv(env)
  } catch (error) {
    if (error instanceof ConfigError) return error.message
    throw error
  }
  throw new Error(`accepted: ${JSON.stringify(env)}`)
}

describe('configFromEnv: WeChat Pay', () => {
  it('runs the WeChat Pay emulator without WECHATPAY_MCHID beside an emulated Official Account only', () => {
    expect(configFromEnv({}).wechatPay).toEqual({ kind: 'emulator' })
    // Beside a real one the emulator would pay any order for nothing (/demo/pay): no payments, a
    // refusal when a variable asks for them, the emulator only with SCANAUTH_DEMO=1.
    const account = { WECHAT_APP_ID: 'wx1', WECHAT_APP_SECRET: 's', WECHAT_TOKEN: 't' }
    expect(configFromEnv(account).wechatPay).toEqual({ kind: 'none' })
    const plans = JSON.stringify(DEFAULT_PLANS.map(({ id, description, amountFen, grant }) => ({ id, description, amount_fen: amountFen, grant })))
    expect(refusal({ ...account, SCANAUTH_PLANS: plans })).toMatch(
      /^WECHAT_APP_ID is a real Official Account but WECHATPAY_MCHID is unset: .* unset SCANAUTH_PLANS \(no payments\), or set SCANAUTH_DEMO=1/,
    )
    expect(refusal({ ...account, SCANAUTH_PLANS: plans, WECHATPAY_NOTIFY_URL: 'https://a.example/n' })).toContain('unset SCANAUTH_PLANS and WECHATPAY_NOTIFY_URL (no payments)')
    expect(configFromEnv({ ...account, SCANAUTH_DEMO: '1' })).toMatchObject({ wechatPay: { kind: 'emulator' }, demo: true })
    expect(configFromEnv({ ...account, SCANAUTH_DEMO: '1', WECHATPAY_NOTIFY_URL: 'https://a.example/n' }).wechatPay).toEqual({ kind: 'emulator', notifyUrl: 'https://a.example/n' })
    expect(configFromEnv({ ...account, SCANAUTH_DEMO: '0' }).wechatPay).toEqual({ kind: 'none' })
    // A notify URL of its own works with the emulator too (a proxy in front of the server).
    expect(configFromEnv({ WECHATPAY_NOTIFY_URL: 'https://demo.example.com/wechatpay/notify' }).wechatPay).toEqual({
      kind: 'emulator',
      notifyUrl: 'https://demo.example.com/wechatpay/notify',
    })
  })

  it('reads every WECHATPAY_* variable of a merchant, with the key files, in public-key mode', () => {
    const config = configFromEnv({ ...MERCHANT, WECHATPAY_API_BASE: 'http://127.0.0.1:9/', WECHATPAY_NOTIFY_URL: 'https://pay.example.com/wechatpay/notify' })
    expect(config.wechat).toEqual({ kind: 'emulator' }) // the Official Account stays emulated
    expect(config.wechatPay).toEqual({
      kind: 'merchant',
      mchid: '1230000109',
      appid: 'wxd678efh567hg6787',
      apiV3Key: API_V3_KEY,
      merchantPrivateKeyPem: rsa.privateKey,
      merchantCertSerial: SERIAL,
      publicKeyId: PUB_KEY_ID,
      publicKeyPem: rsa.publicKey,
      apiBaseUrl: 'http://127.0.0.1:9',
      notifyUrl: 'https://pay.example.com/wechatpay/notify',
    })
  })

  it("defaults WECHATPAY_API_BASE to WeChat Pay's, the notify URL to the server's own, and WECHATPAY_APPID to WECHAT_APP_ID", () => {
    expect(configFromEnv(MERCHANT).wechatPay).toMatchObject({ apiBaseUrl: 'https://api.mch.weixin.qq.com' })
    expect(configFromEnv(MERCHANT).wechatPay).not.toHaveProperty('notifyUrl')
    const { WECHATPAY_APPID: _, ...withoutAppid } = MERCHANT
    const account = { WECHAT_APP_ID: 'wx_official_1', WECHAT_APP_SECRET: 's', WECHAT_TOKEN: 't' }
    expect(configFromEnv({ ...withoutAppid, ...account }).wechatPay).toMatchObject({ kind: 'merchant', appid: 'wx_official_1' })
    expect(configFromEnv({ ...MERCHANT, ...account }).wechatPay).toMatchObject({ appid: 'wxd678efh567hg6787' })
    // The Official Account emulated: there is no WECHAT_APP_ID to fall back on.
    expect(refusal(withoutAppid)).toBe(
      'with WECHATPAY_MCHID set, WeChat Pay is real: WECHATPAY_APPID (or WECHAT_APP_ID with a real Official Account) must be set too (or unset WECHATPAY_MCHID to use the WeChat Pay emulator)',
    )
  })

  it('names every variable a merchant still needs, and those that need a merchant', () => {
    expect(refusal({ WECHATPAY_MCHID: '1230000109', WECHATPAY_APPID: 'wx1' })).toBe(
      'with WECHATPAY_MCHID set, WeChat Pay is real: WECHATPAY_API_V3_KEY, WECHATPAY_PRIVATE_KEY_FILE, WECHATPAY_CERT_SERIAL, WECHATPAY_PUBLIC_KEY_FILE, WECHATPAY_PUBLIC_KEY_ID must be set too (or unset WECHATPAY_MCHID to use the WeChat Pay emulator)',
    )
    for (const name of Object.keys(MERCHANT).filter((n) => n !== 'WECHATPAY_MCHID' && n !== 'WECHATPAY_APPID')) {
      const env: Record<string, string> = { ...MERCHANT }
      delete env[name]
      expect(refusal(env), name).toMatch(new RegExp(`: ${name} must be set too`))
    }
    expect(refusal({ WECHATPAY_API_BASE: 'http://127.0.0.1:9' })).toBe('WECHATPAY_API_BASE needs WECHATPAY_MCHID (a real merchant): set it, or unset it to use the WeChat Pay emulator')
    expect(refusal({ WECHATPAY_APPID: 'wx1', WECHATPAY_API_V3_KEY: API_V3_KEY })).toBe(
      'WECHATPAY_APPID, WECHATPAY_API_V3_KEY need WECHATPAY_MCHID (a real merchant): set it, or unset them to use the WeChat Pay emulator',
    )
  })

  it('refuses malformed ids, serials and URLs, naming the variable', () => {
    expect(refusal({ ...MERCHANT, WECHATPAY_MCHID: 'mch 1' })).toBe('WECHATPAY_MCHID must be the merchant id (1 to 32 letters and digits), not "mch 1"')
    expect(refusal({ ...MERCHANT, WECHATPAY_APPID: 'wx/1' })).toMatch(/^WECHATPAY_APPID must be the AppID bound to the merchant/)
    expect(refusal({ ...MERCHANT, WECHATPAY_CERT_SERIAL: 'not-hex!' })).toMatch(/^WECHATPAY_CERT_SERIAL must be the serial of the merchant API certificate/)
    expect(refusal({ ...MERCHANT, WECHATPAY_PUBLIC_KEY_ID: '5157F45F2ACD8E2B' })).toBe(
      'WECHATPAY_PUBLIC_KEY_ID must be WeChat Pay\'s public key id, PUB_KEY_ID_ and digits, not "5157F45F2ACD8E2B"',
    )
    expect(refusal({ ...MERCHANT, WECHATPAY_API_BASE: 'api.mch.weixin.qq.com' })).toMatch(/^WECHATPAY_API_BASE must be an http\(s\) URL/)
    for (const url of ['/wechatpay/notify', 'ftp://example.com/notify', 'https://example.com/notify?x=1', 'https://example.com/notify#a', `https://example.com/${'n'.repeat(250)}`]) {
      expect(refusal({ WECHATPAY_NOTIFY_URL: url }), url).toMatch(/^WECHATPAY_NOTIFY_URL must be an absolute http\(s\) URL/)
    }
  })

  it('wants an APIv3 key of 32 ASCII characters, and never prints it', () => {
    for (const key of ['short', 'k'.repeat(33), `${'k'.repeat(31)}é`, `${'k'.repeat(16)} ${'k'.repeat(15)}`]) {
      const message = refusal({ ...MERCHANT, WECHATPAY_API_V3_KEY: key })
      expect(message, key).toBe(`WECHATPAY_API_V3_KEY must be the APIv3 key, 32 ASCII characters without spaces, not ${key.length} characters`)
    }
  })

  it('refuses key files that cannot be read or are not the PEM key they should be', () => {
    const missing = join(dir, 'no-such.pem')
    expect(refusal({ ...MERCHANT, WECHATPAY_PRIVATE_KEY_FILE: missing })).toBe(`WECHATPAY_PRIVATE_KEY_FILE: cannot read ${missing} (ENOENT)`)
    expect(refusal({ ...MERCHANT, WECHATPAY_PUBLIC_KEY_FILE: dir })).toBe(`WECHATPAY_PUBLIC_KEY_FILE: cannot read ${dir} (EISDIR)`)
    const text = file('notes.txt', 'my merchant key is in the safe')
    expect(refusal({ ...MERCHANT, WECHATPAY_PRIVATE_KEY_FILE: text })).toBe(`WECHATPAY_PRIVATE_KEY_FILE: ${text} is not a PEM private key (the merchant's apiclient_key.pem)`)
    const broken = file('broken.pem', '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n')
    expect(refusal({ ...MERCHANT, WECHATPAY_PRIVATE_KEY_FILE: broken })).toBe(`WECHATPAY_PRIVATE_KEY_FILE: ${broken} is not a PEM private key (the merchant's apiclient_key.pem)`)
    // The files swapped: each says what it got.
    expect(refusal({ ...MERCHANT, WECHATPAY_PRIVATE_KEY_FILE: PUB_FILE })).toBe(`WECHATPAY_PRIVATE_KEY_FILE: ${PUB_FILE} is not a PEM private key (the merchant's apiclient_key.pem)`)
    expect(refusal({ ...MERCHANT, WECHATPAY_PUBLIC_KEY_FILE: KEY_FILE })).toBe(`WECHATPAY_PUBLIC_KEY_FILE: ${KEY_FILE} is a private key, not a PEM public key (WeChat Pay's pub_key.pem)`)
    const ecKey = file('ec.pem', ec.privateKey)
    expect(refusal({ ...MERCHANT, WECHATPAY_PRIVATE_KEY_FILE: ecKey })).toBe(`WECHATPAY_PRIVATE_KEY_FILE: ${ecKey} is a ec key; WeChat Pay keys are RSA`)
  })
})

describe('configFromEnv: SCANAUTH_PLANS and SCANAUTH_RECONCILE_MINUTES', () => {
  it('reads a catalog in the shape GET /auth/plans answers, and defaults to three plans', () => {
    expect(DEFAULT_PLANS.map((p) => [p.id, p.amountFen, p.grant])).toEqual([
      ['days-30', 1990, { type: 'time', days: 30 }],
      ['days-7', 690, { type: 'time', days: 7 }],
      ['points-100', 990, { type: 'points', points: 100 }],
    ])
    const plans = [
      { id: 'month', description: '包月', amount_fen: 2500, grant: { type: 'time', days: 31 } },
      { id: 'half-day', description: '12 hours', amount_fen: 1, grant: { type: 'time', days: 0.5 } },
      { id: 'p.50', description: '50 points', amount_fen: 500, grant: { type: 'points', points: 50 } },
    ]
    expect(configFromEnv({ SCANAUTH_PLANS: JSON.stringify(plans) }).plans).toEqual([
      { id: 'month', description: '包月', amountFen: 2500, grant: { type: 'time', days: 31 } },
      { id: 'half-day', description: '12 hours', amountFen: 1, grant: { type: 'time', days: 0.5 } },
      { id: 'p.50', description: '50 points', amountFen: 500, grant: { type: 'points', points: 50 } },
    ])
  })

  it('names the plan and the field of each mistake', () => {
    const good = { id: 'ok', description: 'OK', amount_fen: 100, grant: { type: 'time', days: 1 } }
    const plans = (bad: Record<string, unknown>) => JSON.stringify([good, { ...good, id: 'second', ...bad }])
    expect(refusal({ SCANAUTH_PLANS: '[{' })).toMatch(/^SCANAUTH_PLANS must be a JSON array of plans: /)
    expect(refusal({ SCANAUTH_PLANS: '[]' })).toMatch(/^SCANAUTH_PLANS must be a JSON array of at least one plan/)
    expect(refusal({ SCANAUTH_PLANS: '{"id":"x"}' })).toMatch(/^SCANAUTH_PLANS must be a JSON array of at least one plan/)
    expect(refusal({ SCANAUTH_PLANS: '["x"]' })).toBe('SCANAUTH_PLANS[0] must be an object with id, description, amount_fen, grant')
    for (const [bad, message] of [
      [{ amount_fen: 19.9 }, 'SCANAUTH_PLANS[1].amount_fen must be a positive whole number of fen (1990 for ¥19.90), not 19.9'],
      [{ amount_fen: '1990' }, 'SCANAUTH_PLANS[1].amount_fen must be a positive whole number of fen (1990 for ¥19.90), not "1990"'],
      [{ amount_fen: 0 }, 'SCANAUTH_PLANS[1].amount_fen must be a positive whole number of fen (1990 for ¥19.90), not 0'],
      [{ amount_fen: undefined }, 'SCANAUTH_PLANS[1].amount_fen must be a positive whole number of fen (1990 for ¥19.90), not missing'],
      [{ amount_fen: 2 ** 53 }, `SCANAUTH_PLANS[1].amount_fen must be a positive whole number of fen (1990 for ¥19.90), not ${2 ** 53}`],
      [{ id: 'ok' }, 'SCANAUTH_PLANS[1].id "ok" is used by an earlier plan: ids must be unique'],
      [{ id: 'has space' }, 'SCANAUTH_PLANS[1].id must be 1 to 64 characters of 0-9 A-Z a-z _ . -'],
      [{ description: '' }, 'SCANAUTH_PLANS[1].description must be a text of 1 to 127 bytes of UTF-8 (42 Chinese characters): WeChat Pay shows it to the payer'],
      [{ description: '月'.repeat(43) }, 'SCANAUTH_PLANS[1].description must be a text of 1 to 127 bytes of UTF-8 (42 Chinese characters): WeChat Pay shows it to the payer'],
      [{ price: 1 }, 'SCANAUTH_PLANS[1] has an unknown field "price" (a plan has id, description, amount_fen, grant)'],
      [{ grant: { type: 'time', days: 0 } }, 'SCANAUTH_PLANS[1].grant.days must be a number of days above 0 and at most 36525 that comes to whole seconds, not 0'],
      [{ grant: { type: 'time', days: 1e-9 } }, 'SCANAUTH_PLANS[1].grant.days must be a number of days above 0 and at most 36525 that comes to whole seconds, not 1e-9'],
      [{ grant: { type: 'time', duration: 1 } }, 'SCANAUTH_PLANS[1].grant has an unknown field "duration" (a time grant has type and days)'],
      [{ grant: { type: 'points', points: 1.5 } }, 'SCANAUTH_PLANS[1].grant.points must be a positive whole number, not 1.5'],
      [{ grant: { type: 'money' } }, 'SCANAUTH_PLANS[1].grant must be {"type":"time","days":…} or {"type":"points","points":…}'],
      [{ grant: undefined }, 'SCANAUTH_PLANS[1].grant must be {"type":"time","days":…} or {"type":"points","points":…}'],
    ] as const) {
      expect(refusal({ SCANAUTH_PLANS: plans(bad) }), JSON.stringify(bad)).toBe(message)
    }
  })

  it('reads SCANAUTH_RECONCILE_MINUTES: minutes between reconciliations, 0 for none, a minute by default', () => {
    expect(configFromEnv({}).reconcileEveryMs).toBeUndefined()
    expect(configFromEnv({ SCANAUTH_RECONCILE_MINUTES: '5' }).reconcileEveryMs).toBe(5 * 60_000)
    expect(configFromEnv({ SCANAUTH_RECONCILE_MINUTES: '0' }).reconcileEveryMs).toBe(false)
    for (const raw of ['-1', '1.5', '1441', 'often']) {
      expect(refusal({ SCANAUTH_RECONCILE_MINUTES: raw }), raw).toBe(`SCANAUTH_RECONCILE_MINUTES must be an integer from 0 to 1440, not "${raw}"`)
    }
  })
})
