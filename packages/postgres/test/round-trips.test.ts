// How many statements each operation sends, counted on the real pool: every statement the store
// runs goes through pool.query (the LISTEN client aside), so counting those calls counts round trips.
import { afterAll, afterEach, beforeEach, expect, it } from 'vitest'
import { createScanAuth, type ScanAuth } from '@scanauth/core'
import { ManualClock, RecordingQrProvider } from '@scanauth/testkit'
import { PostgresStore } from '@scanauth/postgres'
import { NOTIFY_STATEMENT } from '../src/scene-notifier'
import { dropSchema, freshSchemaName, openPool } from './support/database'

const pool = openPool(4)
afterAll(() => pool.end())

let schema = ''
let store: PostgresStore
let auth: ScanAuth
let sent: string[] = []
const query = pool.query.bind(pool)

beforeEach(async () => {
  schema = freshSchemaName()
  store = new PostgresStore({ pool, schema })
  await store.migrate()
  auth = createScanAuth({ store, qr: new RecordingQrProvider(), now: new ManualClock().now })
  sent = []
  // Count, then run the real query.
  pool.query = ((config: unknown, ...rest: unknown[]) => {
    sent.push(typeof config === 'string' ? config : ((config as { text: string }).text ?? ''))
    return (query as (...args: unknown[]) => unknown)(config, ...rest)
  }) as typeof pool.query
})

afterEach(async () => {
  pool.query = query as typeof pool.query
  await store.close()
  await dropSchema(pool, schema)
})

/** Statements sent while `run` ran. */
async function statementsOf(run: () => Promise<unknown>): Promise<string[]> {
  sent = []
  await run()
  return [...sent]
}

it('a pending poll is one statement: one lookup of the scene', async () => {
  const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
  const poll = await statementsOf(() => auth.getStatus(sceneStr))
  expect(poll).toHaveLength(1)
  expect(poll[0]).toMatch(/^SELECT \(SELECT json_build_array\(.*\) FROM "scanauth_test_\w+"\.scanauth_scenes x WHERE x\.scene_str = \$1\) AS "scene"$/s)
})

it('a first scan is two statements awaited, one load and one commit, then a notification it does not wait for', async () => {
  const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
  const scan = await statementsOf(() => auth.handleScan({ sceneStr, openid: 'alice' }))
  expect(scan).toHaveLength(3)
  expect(scan[1]).toMatch(/scanauth_commit\(\$1::jsonb\)/)
  // Sent once the commit has answered ok, outside its transaction (src/scene-notifier.ts).
  expect(scan[2]).toBe(NOTIFY_STATEMENT)
  expect((await auth.getStatus(sceneStr)).status).toBe('authorized')
})

it('counter calls are one statement each', async () => {
  expect(await statementsOf(() => store.incrementCounter('k', 2e12, 1))).toHaveLength(1)
  expect(await statementsOf(() => store.deleteCounter('k'))).toHaveLength(1)
})

it('a commit that is refused, or writes no scene, sends no notification', async () => {
  const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
  const scene = (await store.load({ sceneStr })).scene
  const stale = { op: 'update' as const, scene: { ...(scene as NonNullable<typeof scene>), status: 'expired' as const, version: 9 }, expectedVersion: 8 }
  const refused = await statementsOf(async () => expect(await store.commit({ scene: stale })).toEqual({ ok: false, conflict: 'scene' }))
  expect(refused).toHaveLength(1)
  const keyOnly = await statementsOf(() => store.commit({ idempotency: { key: 'k', fingerprint: 'f', authorizationId: null, result: null, createdAt: 1 } }))
  expect(keyOnly).toHaveLength(1)
})

it('a session check is one statement: the session and its user in one SELECT (B-load-2); a consumption adds its commit', async () => {
  const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
  await auth.handleScan({ sceneStr, openid: 'alice' })
  const status = await auth.getStatus(sceneStr)
  if (status.status !== 'authorized') throw new Error('not authorized')
  const verify = await statementsOf(async () => expect(await auth.verifySession(status.sessionToken)).toMatchObject({ userId: 1 }))
  expect(verify).toHaveLength(1)
  expect(verify[0]).toMatch(/scanauth_users u WHERE u\.id = \(SELECT t\.user_id FROM "scanauth_test_\w+"\.scanauth_sessions t WHERE t\.token = \$1\)/)
  expect(await statementsOf(() => auth.verifySession('no-such-session'))).toHaveLength(1)
  const consume = await statementsOf(() => auth.consume({ sessionToken: status.sessionToken, idempotencyKey: 'tap-1' }))
  expect(consume).toHaveLength(2)
  expect(consume[1]).toMatch(/scanauth_commit\(\$1::jsonb\)/)
  expect(await statementsOf(() => auth.consume({ sessionToken: status.sessionToken, idempotencyKey: 'tap-1' }))).toHaveLength(1)
})
