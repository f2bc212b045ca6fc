// The Express example server (src/app.ts) over real sockets: the suite both examples share, then the
// shared configuration's reading of the environment (tested once, here).
import { describe, expect, it } from 'vitest'
import { ConfigError, configFromEnv } from '@scanauth/example-shared'
import { describeExampleApp } from '@scanauth/example-shared/testing'
import { startServer } from '../src/app'

describeExampleApp('express', startServer)

describe('configFromEnv', () => {
  it('defaults to 127.0.0.1, port 3000, SQLite in ./data and the emulator', () => {
    const config = configFromEnv({})
    expect(config.host).toBe('127.0.0.1')
    expect(config.port).toBe(3000)
    expect(config.store).toEqual({ kind: 'sqlite', filename: expect.stringMatching(/[/\\]data[/\\]scanauth\.sqlite$/) })
    expect(config.wechat).toEqual({ kind: 'emulator' })
    expect(config.wechatPay).toEqual({ kind: 'emulator' })
    expect(config.plans).toBeUndefined() // the default catalog
    expect(config.reconcileEveryMs).toBeUndefined() // a minute
  })

  it('reads every variable', () => {
    const config = configFromEnv({
      PORT: '0',
      HOST: '127.0.0.1',
      SCANAUTH_STORE: 'redis',
      REDIS_URL: 'redis://example:6380',
      SCANAUTH_REDIS_PREFIX: 'app:',
      SCANAUTH_SCENE_TTL_SECONDS: '120',
      SCANAUTH_FREE_TRIAL_DAYS: '0.0007',
      WECHAT_APP_ID: 'wx1',
      WECHAT_APP_SECRET: 'secret',
      WECHAT_TOKEN: 'token',
      WECHAT_ENCODING_AES_KEY: 'k'.repeat(43),
      WECHAT_API_BASE: 'http://127.0.0.1:9',
      SCANAUTH_CONFIRM: 'link',
      SCANAUTH_PUBLIC_URL: 'https://app.example/',
      SCANAUTH_REQUIRE_POLL_SECRET: 'true',
      SCANAUTH_DEMO: '1',
    })
    expect(config).toEqual({
      port: 0,
      host: '127.0.0.1',
      store: { kind: 'redis', url: 'redis://example:6380', keyPrefix: 'app:' },
      wechat: { kind: 'account', appId: 'wx1', appSecret: 'secret', token: 'token', encodingAESKey: 'k'.repeat(43), apiBaseUrl: 'http://127.0.0.1:9' },
      sceneTtlSeconds: 120,
      freeTrialDays: 0.0007,
      wechatPay: { kind: 'emulator' }, // beside a real account only with SCANAUTH_DEMO=1 (pay-config.test.ts)
      confirm: 'link',
      publicUrl: 'https://app.example',
      requirePollSecret: true,
      demo: true,
    })
    expect(configFromEnv({ SCANAUTH_STORE: 'memory' }).store).toEqual({ kind: 'memory' })
  })

  it('refuses confirm-on-the-phone settings it cannot use, naming the variable', () => {
    expect(() => configFromEnv({ SCANAUTH_CONFIRM: 'yes' })).toThrow(/SCANAUTH_CONFIRM must be scan .* or link/)
    expect(() => configFromEnv({ SCANAUTH_PUBLIC_URL: 'app.example' })).toThrow(/SCANAUTH_PUBLIC_URL must be an http\(s\) URL/)
    expect(() => configFromEnv({ SCANAUTH_PUBLIC_URL: 'ftp://app.example' })).toThrow(/SCANAUTH_PUBLIC_URL/)
    expect(() => configFromEnv({ SCANAUTH_PUBLIC_URL: 'https://app.example/?x=1' })).toThrow(/without a query/)
    expect(() => configFromEnv({ SCANAUTH_REQUIRE_POLL_SECRET: 'yes' })).toThrow(/SCANAUTH_REQUIRE_POLL_SECRET must be true or false/)
    expect(configFromEnv({}).confirm).toBe('scan')
    expect(configFromEnv({}).requirePollSecret).toBe(false)
  })

  it('reads SCANAUTH_PURGE_MINUTES: minutes between purges, 0 for none, an hour by default', () => {
    expect(configFromEnv({}).purgeEveryMs).toBeUndefined()
    expect(configFromEnv({ SCANAUTH_PURGE_MINUTES: '15' }).purgeEveryMs).toBe(15 * 60_000)
    expect(configFromEnv({ SCANAUTH_PURGE_MINUTES: '0' }).purgeEveryMs).toBe(false)
    expect(() => configFromEnv({ SCANAUTH_PURGE_MINUTES: '-1' })).toThrow(/SCANAUTH_PURGE_MINUTES must be an integer from 0 to 10080/)
  })

  it('says what is wrong', () => {
    expect(() => configFromEnv({ PORT: 'eighty' })).toThrow(ConfigError)
    expect(() => configFromEnv({ PORT: '70000' })).toThrow(/PORT/)
    expect(() => configFromEnv({ SCANAUTH_STORE: 'mongo' })).toThrow(/SCANAUTH_STORE/)
    expect(() => configFromEnv({ WECHAT_APP_ID: 'wx1' })).toThrow(/WECHAT_APP_SECRET, WECHAT_TOKEN/)
    expect(() => configFromEnv({ WECHAT_API_BASE: 'http://x' })).toThrow(/WECHAT_APP_ID/)
    expect(() => configFromEnv({ WECHAT_ENCODING_AES_KEY: 'short' })).toThrow(
      new ConfigError("WECHAT_ENCODING_AES_KEY must be 43 characters from [A-Za-z0-9] (the account's EncodingAESKey), not 5 characters"),
    )
  })

  it('reads SCANAUTH_STORE=postgres with DATABASE_URL and SCANAUTH_PG_SCHEMA, each with its default', () => {
    expect(configFromEnv({ SCANAUTH_STORE: 'postgres' }).store).toEqual({ kind: 'postgres', url: 'postgres://postgres@127.0.0.1:5432/test', schema: 'scanauth' })
    const url = 'postgresql://app:secret@db.internal:6432/prod?sslmode=require'
    expect(configFromEnv({ SCANAUTH_STORE: 'postgres', DATABASE_URL: ` ${url} `, SCANAUTH_PG_SCHEMA: 'auth_1' }).store).toEqual({ kind: 'postgres', url, schema: 'auth_1' })
    // The PostgreSQL variables mean nothing to the other stores.
    expect(configFromEnv({ DATABASE_URL: 'not a url', SCANAUTH_PG_SCHEMA: 'Bad-Name' }).store.kind).toBe('sqlite')
  })

  it('refuses a DATABASE_URL that is not a postgres URL, without echoing it, and a schema PostgresStore would refuse', () => {
    for (const raw of ['127.0.0.1:5432/test', 'mysql://root:hunter2@db/app', 'postgres//postgres@127.0.0.1/test', 'host=127.0.0.1 dbname=test']) {
      expect(() => configFromEnv({ SCANAUTH_STORE: 'postgres', DATABASE_URL: raw }), raw).toThrow(
        new ConfigError('DATABASE_URL must be a postgres:// or postgresql:// URL, e.g. postgres://user:password@127.0.0.1:5432/database'),
      )
    }
    expect(configFromEnv({ SCANAUTH_STORE: 'postgres', SCANAUTH_PG_SCHEMA: `_${'a'.repeat(39)}` }).store).toMatchObject({ schema: `_${'a'.repeat(39)}` })
    for (const raw of ['Scanauth', '1st', 'scan-auth', 'a'.repeat(41), 'public"; drop', 'schéma']) {
      expect(() => configFromEnv({ SCANAUTH_STORE: 'postgres', SCANAUTH_PG_SCHEMA: raw }), raw).toThrow(
        new ConfigError(`SCANAUTH_PG_SCHEMA must be 1 to 40 characters of a-z, 0-9 and _, not starting with a digit, not "${raw}"`),
      )
    }
    expect(() => configFromEnv({ SCANAUTH_STORE: 'mongo' })).toThrow(new ConfigError('SCANAUTH_STORE must be sqlite, memory, redis or postgres, not "mongo"'))
  })

  it('gives the emulator a WECHAT_TOKEN and WECHAT_ENCODING_AES_KEY set without an account, rather than ignoring them', () => {
    const key = 'k'.repeat(43)
    expect(configFromEnv({ WECHAT_TOKEN: 'mine' }).wechat).toEqual({ kind: 'emulator', token: 'mine' })
    expect(configFromEnv({ WECHAT_ENCODING_AES_KEY: key }).wechat).toEqual({ kind: 'emulator', encodingAESKey: key })
    expect(configFromEnv({ WECHAT_TOKEN: 'mine', WECHAT_ENCODING_AES_KEY: key }).wechat).toEqual({ kind: 'emulator', token: 'mine', encodingAESKey: key })
  })

  it("takes a scene lifetime in core's range, 1 s to 30 days: 0 is refused here, not by core at the first request", () => {
    expect(configFromEnv({ SCANAUTH_SCENE_TTL_SECONDS: '1' }).sceneTtlSeconds).toBe(1)
    expect(configFromEnv({ SCANAUTH_SCENE_TTL_SECONDS: '2592000' }).sceneTtlSeconds).toBe(2_592_000)
    for (const raw of ['0', '2592001', '-5', '1.5', '1e3', 'five']) {
      expect(() => configFromEnv({ SCANAUTH_SCENE_TTL_SECONDS: raw }), raw).toThrow(
        new ConfigError(`SCANAUTH_SCENE_TTL_SECONDS must be an integer from 1 to 2592000, not "${raw}"`),
      )
    }
    expect(() => configFromEnv({ PORT: '65536' })).toThrow(new ConfigError('PORT must be an integer from 0 to 65535, not "65536"'))
  })

  it('takes a free trial of any length core accepts, fractions of a day too', () => {
    expect(configFromEnv({}).freeTrialDays).toBeUndefined() // core's 7 days
    for (const [raw, days] of [['7', 7], ['0.5', 0.5], ['.0007', 0.0007], ['36525', 36525]] as const) {
      expect(configFromEnv({ SCANAUTH_FREE_TRIAL_DAYS: raw }).freeTrialDays).toBe(days)
    }
    for (const raw of ['0', '0.0', '-1', '36525.5', '1e3', 'Infinity', '0x10', 'seven', '7 days']) {
      expect(() => configFromEnv({ SCANAUTH_FREE_TRIAL_DAYS: raw }), raw).toThrow(
        new ConfigError(`SCANAUTH_FREE_TRIAL_DAYS must be a number of days above 0 and at most 36525 (e.g. 7, or 0.0007 for about a minute), not "${raw}"`),
      )
    }
  })
})

describe('configFromEnv: reminders before access ends', () => {
  it('reads SCANAUTH_REMINDERS and the variables beside it; unset, no reminders', () => {
    expect(configFromEnv({}).reminders).toBeUndefined()
    expect(configFromEnv({ SCANAUTH_REMINDERS: '3,1' }).reminders).toEqual({ leadDays: [3, 1], everyMs: 60_000 })
    expect(configFromEnv({ SCANAUTH_REMINDERS: ' 7, 3 ,0.5,.0005 ' }).reminders).toMatchObject({ leadDays: [7, 3, 0.5, 0.0005] })
    expect(
      configFromEnv({
        SCANAUTH_REMINDERS: '3',
        SCANAUTH_REMINDERS_POINTS_BELOW: '10',
        SCANAUTH_REMINDERS_INTERVAL_SECONDS: '300',
        WECHAT_SUBSCRIBE_TEMPLATE_ID: 'ngqIpbwh8bUfcSsECmogfXcV14J0tQlEpBO27izEYtY',
        WECHAT_TEMPLATE_ID_RENEWAL: 'TPL_1-2',
        WECHAT_TEMPLATE_FIELDS_RENEWAL: '{"thing1":"headline","time2":"ends","character_string3":"remaining","thing4":"action"}',
      }).reminders,
    ).toEqual({
      leadDays: [3],
      pointsBelow: 10,
      everyMs: 300_000,
      subscribeTemplateId: 'ngqIpbwh8bUfcSsECmogfXcV14J0tQlEpBO27izEYtY',
      templateId: 'TPL_1-2',
      templateFields: { thing1: 'headline', time2: 'ends', character_string3: 'remaining', thing4: 'action' },
    })
    // 0: no timer (a cron job runs scanauth reminders); the reminders are on all the same.
    expect(configFromEnv({ SCANAUTH_REMINDERS: '1', SCANAUTH_REMINDERS_INTERVAL_SECONDS: '0' }).reminders).toEqual({ leadDays: [1], everyMs: false })
  })

  it('stops the start naming the variable', () => {
    for (const raw of ['x', '3,', '0', '61', '3,3', '1e1', '-1', 'Infinity', '3;1']) {
      expect(() => configFromEnv({ SCANAUTH_REMINDERS: raw }), raw).toThrow(
        new ConfigError(`SCANAUTH_REMINDERS must be the days before access ends to remind at, separated by commas (e.g. 3,1, or 0.0005 for about 43 s), each above 0 and at most 60, each once, not "${raw}"`),
      )
    }
    expect(configFromEnv({ SCANAUTH_REMINDERS: '60' }).reminders?.leadDays).toEqual([60])
    expect(() => configFromEnv({ SCANAUTH_REMINDERS: '3', SCANAUTH_REMINDERS_POINTS_BELOW: '0' })).toThrow(/SCANAUTH_REMINDERS_POINTS_BELOW must be a whole number of points from 1/)
    expect(() => configFromEnv({ SCANAUTH_REMINDERS: '3', SCANAUTH_REMINDERS_INTERVAL_SECONDS: '86401' })).toThrow(
      new ConfigError('SCANAUTH_REMINDERS_INTERVAL_SECONDS must be a whole number of seconds from 0 (no timer: run scanauth reminders from cron) to 86400, not "86401"'),
    )
    expect(() => configFromEnv({ SCANAUTH_REMINDERS: '3', SCANAUTH_REMINDERS_INTERVAL_SECONDS: '1.5' })).toThrow(/SCANAUTH_REMINDERS_INTERVAL_SECONDS/)
    expect(() => configFromEnv({ SCANAUTH_REMINDERS: '3', WECHAT_SUBSCRIBE_TEMPLATE_ID: 'has space' })).toThrow(/WECHAT_SUBSCRIBE_TEMPLATE_ID must be a template id/)
    expect(() => configFromEnv({ SCANAUTH_REMINDERS: '3', WECHAT_TEMPLATE_FIELDS_RENEWAL: '{"thing1":"headline"}' })).toThrow(
      new ConfigError('WECHAT_TEMPLATE_FIELDS_RENEWAL maps the fields of WECHAT_TEMPLATE_ID_RENEWAL: set that too, or unset it'),
    )
    for (const [raw, says] of [
      ['thing1=headline', /; it is not JSON$/],
      ['[]', /, with 1 to 20 fields$/],
      ['{"thing1":"price"}', /; the fact of "thing1" is "price"$/],
      ['{"thing1":1}', /; the fact of "thing1" is 1$/],
      ['{"a b":"ends"}', /; "a b" is not a field name/],
    ] as const) {
      expect(() => configFromEnv({ SCANAUTH_REMINDERS: '3', WECHAT_TEMPLATE_ID_RENEWAL: 'T', WECHAT_TEMPLATE_FIELDS_RENEWAL: raw }), raw).toThrow(says)
    }
    // A reminder setting without SCANAUTH_REMINDERS is a mistake, not something silently ignored.
    expect(() => configFromEnv({ WECHAT_SUBSCRIBE_TEMPLATE_ID: 'SUB', WECHAT_TEMPLATE_ID_RENEWAL: 'TPL' })).toThrow(
      new ConfigError('WECHAT_SUBSCRIBE_TEMPLATE_ID, WECHAT_TEMPLATE_ID_RENEWAL are reminder settings: set SCANAUTH_REMINDERS too (the lead days, e.g. 3,1), or unset them'),
    )
    expect(() => configFromEnv({ SCANAUTH_REMINDERS_INTERVAL_SECONDS: '60' })).toThrow(/SCANAUTH_REMINDERS_INTERVAL_SECONDS is a reminder setting: set SCANAUTH_REMINDERS too/)
  })

  it('a real account with reminders and no template warns at start: customer-service messages reach almost nobody days ahead', async () => {
    const lines: string[] = []
    const running = await startServer({
      ...configFromEnv({ PORT: '0', SCANAUTH_STORE: 'memory', SCANAUTH_REMINDERS: '3,1', WECHAT_APP_ID: 'wx_warn', WECHAT_APP_SECRET: 's', WECHAT_TOKEN: 't', WECHAT_API_BASE: 'http://127.0.0.1:9' }),
      log: (line) => lines.push(line),
    })
    try {
      expect(lines.join('\n')).toContain('reminders 3, 1 days before access ends, a pass every 60 s: customer-service; no links (set SCANAUTH_PUBLIC_URL, the public https address)')
      expect(lines.join('\n')).toContain('reminders: customer-service messages only (no WECHAT_SUBSCRIBE_TEMPLATE_ID, no WECHAT_TEMPLATE_ID_RENEWAL)')
    } finally {
      await running.close()
    }
  })
})
