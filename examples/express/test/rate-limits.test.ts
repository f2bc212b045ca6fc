// The example's create_scene limits from the environment (SCANAUTH_CREATE_SCENE_PER_MINUTE per client
// address, SCANAUTH_DAILY_QR_BUDGET), read by the shared configuration and passed to createScanAuth by
// the shared wiring (so this one test covers the Koa example too), over real sockets.
import { afterEach, describe, expect, it } from 'vitest'
import { ConfigError, configFromEnv, type ExampleConfig, type RunningServer } from '@scanauth/example-shared'
import { postJson } from '@scanauth/testkit'
import { startServer } from '../src/app'

const running: RunningServer[] = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.close()))
})

async function start(overrides: Partial<ExampleConfig>): Promise<string> {
  // A clock that stands still at 30 s into a minute: no window ends during the test.
  const at = Date.parse('2026-01-01T00:00:30.000Z')
  const server = await startServer({ port: 0, host: '127.0.0.1', store: { kind: 'memory' }, wechat: { kind: 'emulator' }, log: () => {}, now: () => at, ...overrides })
  running.push(server)
  return server.url
}

describe('the example server and the create_scene limits', () => {
  it('reads SCANAUTH_CREATE_SCENE_PER_MINUTE and SCANAUTH_DAILY_QR_BUDGET; 0 turns a limit off; unset is core’s default', () => {
    expect(configFromEnv({})).toMatchObject({ createScenePerMinute: undefined, dailyQrBudget: undefined })
    expect(configFromEnv({ SCANAUTH_CREATE_SCENE_PER_MINUTE: '5', SCANAUTH_DAILY_QR_BUDGET: '1000' })).toMatchObject({ createScenePerMinute: 5, dailyQrBudget: 1000 })
    expect(configFromEnv({ SCANAUTH_CREATE_SCENE_PER_MINUTE: '0', SCANAUTH_DAILY_QR_BUDGET: '0' })).toMatchObject({ createScenePerMinute: false, dailyQrBudget: false })
    for (const raw of ['-1', '1.5', 'ten', '1000000001']) {
      expect(() => configFromEnv({ SCANAUTH_DAILY_QR_BUDGET: raw }), raw).toThrow(new ConfigError(`SCANAUTH_DAILY_QR_BUDGET must be an integer from 0 to 1000000000, not "${raw}"`))
    }
  })

  it('answers 429 with Retry-After past SCANAUTH_CREATE_SCENE_PER_MINUTE from one address', async () => {
    const url = await start({ createScenePerMinute: 2 })
    for (const device of ['a', 'b']) expect((await postJson(`${url}/auth/create_scene`, { device_id: device })).status).toBe(200)
    const refused = await postJson(`${url}/auth/create_scene`, { device_id: 'c' })
    expect([refused.status, refused.headers.get('retry-after'), refused.body]).toEqual([429, '30', { detail: 'Too many QR codes requested from this address; try again in 30 s' }])
  })

  it('answers 429 until midnight UTC past SCANAUTH_DAILY_QR_BUDGET, and not at all with both off', async () => {
    const budget = await start({ dailyQrBudget: 1 })
    expect((await postJson(`${budget}/auth/create_scene`, { device_id: 'a' })).status).toBe(200)
    const refused = await postJson(`${budget}/auth/create_scene`, { device_id: 'b' })
    expect([refused.status, refused.headers.get('retry-after')]).toEqual([429, String(86_400 - 30)])

    const open = await start({ createScenePerMinute: false, dailyQrBudget: false })
    for (let i = 0; i < 35; i++) expect((await postJson(`${open}/auth/create_scene`, { device_id: `d-${i}` })).status).toBe(200)
  })
})
