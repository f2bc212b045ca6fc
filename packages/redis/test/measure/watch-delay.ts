/**
 * How long the commit script's PUBLISH takes to reach a listening store (docs/redis.md, "Waiting
 * for a scan"): not a test, a measurement, run by hand and recorded in the docs.
 *
 *   node --import tsx --conditions=@scanauth/source packages/redis/test/measure/watch-delay.ts
 *
 * One store listens on its subscriber connection; another store on another client creates 500
 * scenes one after the other; each delay is from the commit's reply to the listener being told
 * (both in this process, so both on one clock). Also the commit's own time with and without a
 * listener, to show the PUBLISH inside the script costs the commit nothing visible.
 */
import { performance } from 'node:perf_hooks'
import { Redis } from 'ioredis'
import { createScanAuth } from '@scanauth/core'
import { RedisStore } from '../../src/index'
import { deleteKeysUnder, REDIS_URL, testPrefix } from '../support/redis'

const SAMPLES = 500

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number
}

const prefix = testPrefix()
const listenerClient = new Redis(REDIS_URL)
const writerClient = new Redis(REDIS_URL)
const listener = new RedisStore({ client: listenerClient, keyPrefix: prefix })
const auth = createScanAuth({ store: new RedisStore({ client: writerClient, keyPrefix: prefix }), qr: { createQr: async () => ({ url: 'https://qr.example.test/x' }) } })

/** Creates SAMPLES scenes; resolves with each commit's time and when it returned. */
async function createScenes(): Promise<Array<{ sceneStr: string; took: number; at: number }>> {
  const out: Array<{ sceneStr: string; took: number; at: number }> = []
  for (let i = 0; i < SAMPLES; i++) {
    const start = performance.now()
    const { sceneStr } = await auth.createScene({ deviceId: `device-${i}` })
    const at = performance.now()
    out.push({ sceneStr, took: at - start, at })
  }
  return out
}

try {
  await createScenes() // warm-up: scripts cached, connections open
  const alone = (await createScenes()).map((c) => c.took).sort((a, b) => a - b)
  const toldAt = new Map<string, number>()
  const stop = listener.watchScenes((sceneStr) => toldAt.set(sceneStr, performance.now()))
  await listener.load({ sceneStr: 'pc_none' }) // the subscription is in place
  const commits = await createScenes()
  while (commits.some((c) => !toldAt.has(c.sceneStr))) await new Promise((resolve) => setTimeout(resolve, 5))
  stop()
  // Told before the commit's reply arrived counts as 0: the message may overtake the reply.
  const delays = commits.map((c) => Math.max(0, (toldAt.get(c.sceneStr) as number) - c.at)).sort((a, b) => a - b)
  const watched = commits.map((c) => c.took).sort((a, b) => a - b)
  const f = (n: number) => n.toFixed(2)
  console.log(
    `createScene commit p50 ${f(percentile(alone, 50))} ms without a listener, ${f(percentile(watched, 50))} ms with one; ` +
      `commit reply → listener told over ${SAMPLES}: p50 ${f(percentile(delays, 50))} ms, p99 ${f(percentile(delays, 99))} ms, max ${f(delays[delays.length - 1] as number)} ms`,
  )
} finally {
  await listener.close()
  await deleteKeysUnder(writerClient, prefix)
  await Promise.all([listenerClient.quit(), writerClient.quit()])
}
