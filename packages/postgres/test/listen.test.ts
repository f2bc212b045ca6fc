// watchScenes when the LISTEN connection is lost (a failover, an idle-connection killer, an admin's
// pg_terminate_backend): the store drops the dead client, says it is no longer listening, and the
// next load or commit while listeners remain subscribes again, so later commits are heard.
// Notifications sent while nobody listened are lost; a wait then ends at its timeout with a fresh
// read (docs/postgres.md, "Waiting for a scan").
import { afterAll, afterEach, beforeEach, expect, it } from 'vitest'
import { createScanAuth, type ScanAuth } from '@scanauth/core'
import { eventually, ManualClock, RecordingQrProvider, told } from '@scanauth/testkit'
import { PostgresStore } from '@scanauth/postgres'
import { sceneChannel, SceneNotifier } from '../src/scene-notifier'
import { dropSchema, freshSchemaName, openPool } from './support/database'

const pool = openPool(4)
/** A pool of its own for the writer, so the listening store's pool holds only its own clients. */
const writerPool = openPool(2)
afterAll(async () => {
  await pool.end()
  await writerPool.end()
})

let schema = ''
let store: PostgresStore
let writer: ScanAuth

beforeEach(async () => {
  schema = freshSchemaName()
  store = new PostgresStore({ pool, schema })
  await store.migrate()
  const writerStore = new PostgresStore({ pool: writerPool, schema })
  await writerStore.migrate()
  writer = createScanAuth({ store: writerStore, qr: new RecordingQrProvider(), now: new ManualClock().now })
})

afterEach(async () => {
  await store.close()
  await dropSchema(pool, schema)
})

/** Terminates the backend that LISTENs on this schema's channel; answers how many it ended. */
/** How many backends LISTEN on the store's channel now (last query as pg_stat_activity shows it). */
async function listeningBackends(): Promise<number> {
  const { rows } = await writerPool.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE query = $1`, [`LISTEN "${schema}_scanauth_scenes"`])
  return rows[0]?.n ?? 0
}

async function terminateListener(): Promise<number> {
  const { rows } = await writerPool.query<{ ended: boolean }>(
    `SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE query = $1`,
    [`LISTEN "${schema}_scanauth_scenes"`],
  )
  return rows.filter((row) => row.ended).length
}

it('hears commits again after its LISTEN connection was terminated', async () => {
  const heard: string[] = []
  store.watchScenes((sceneStr) => heard.push(sceneStr))
  await store.load({ sceneStr: 'nothing' }) // subscribes
  expect(store.listening).toBe(true)
  const before = (await writer.createScene({ deviceId: 'tv-1' })).sceneStr
  await told(heard, before)

  expect(await terminateListener()).toBe(1)
  await eventually('the store to notice its LISTEN connection is gone', () => !store.listening)

  // The next read subscribes again on a fresh client; from then on commits are heard.
  await store.load({ sceneStr: 'nothing' })
  expect(store.listening).toBe(true)
  const after = (await writer.createScene({ deviceId: 'tv-2' })).sceneStr
  await told(heard, after)
  // The pool is whole: the dead client was destroyed, not handed out again.
  expect(await store.load({ sceneStr: after })).toMatchObject({ scene: { sceneStr: after } })
})

it('gives its client back and stops when the last listener leaves, and LISTENs nowhere after close()', async () => {
  const stop = store.watchScenes(() => undefined)
  await store.load({ sceneStr: 'nothing' })
  expect(store.listening).toBe(true)
  stop()
  await eventually('the store to unlisten', () => !store.listening)
  // The store stops counting itself as listening before its UNLISTEN reaches the server: wait for
  // the server to see it, then no backend may be left listening.
  await eventually('the server to see the UNLISTEN', async () => (await listeningBackends()) === 0)
  expect(await terminateListener()).toBe(0)
  store.watchScenes(() => undefined)
  await store.load({ sceneStr: 'nothing' })
  await store.close()
  expect(store.listening).toBe(false)
  expect(await terminateListener()).toBe(0)
})

it('sends the notifications of writes committed while one is on its way together, in one statement, and every one arrives', async () => {
  const heard: string[] = []
  store.watchScenes((sceneStr) => heard.push(sceneStr))
  await store.load({ sceneStr: 'nothing' }) // subscribes
  const statements: string[][] = []
  const query = writerPool.query.bind(writerPool)
  writerPool.query = ((config: { values: [string, string[]] }) => {
    statements.push(config.values[1])
    return (query as (c: unknown) => Promise<unknown>)(config)
  }) as unknown as typeof writerPool.query
  try {
    const notifier = new SceneNotifier(writerPool, sceneChannel(schema), 'scanauth_test_notify')
    // The first goes at once; the next three are asked for while it is on its way.
    for (const sceneStr of ['s1', 's2', 's3', 's2']) notifier.notify(sceneStr)
    await notifier.settled()
    expect(statements).toEqual([['s1'], ['s2', 's3']])
    for (const sceneStr of ['s1', 's2', 's3']) await told(heard, sceneStr)
  } finally {
    writerPool.query = query as typeof writerPool.query
  }
})
