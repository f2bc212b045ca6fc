// 1,000 waits over HTTP whose clients all go away (docs/behaviour.md B-wait-4): half long polls
// (`status?wait=30`), half event streams, on ten scenes, through scanAuthRouter on a real socket.
// Afterwards nothing is left: no wait in the service, no store subscription, no connection on the
// server, and the process holds no more timers than before.
import { afterEach, expect, it } from 'vitest'
import express from 'express'
import { createScanAuth, type ScanAuth } from '@scanauth/core'
import { eventually, listen, RecordingQrProvider, WatchCountingStore, type Listening } from '@scanauth/testkit'
import { scanAuthRouter } from '../src/index'

const WAITS = 1000
const SCENES = 10
/**
 * How long the test lets the departures take effect. Well under what would end the waits anyway
 * (a long poll's 30 s, the streams' heartbeat set to 10 minutes below), so only the abort can pass
 * it; far over what an abort takes, so a busy machine passes too.
 */
const SETTLE_MS = 20_000

let server: Listening | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

/** The timers the process holds now (each wait holds one while it lasts). */
function timers(): number {
  return process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length
}

it(`${WAITS} aborted waits over HTTP leave no wait, subscription, connection or timer behind`, async () => {
  const store = new WatchCountingStore()
  // The poll ceiling is off: a thousand waits on a few scenes is this test's load, not an abuse to stop.
  const auth = createScanAuth({ store, qr: new RecordingQrProvider(), rateLimits: { statusPollsPerScene: false } })
  // The service as the router sees it, counting the waits in progress: all of them must be waiting
  // before the clients leave, so that the test aborts waits and not requests still on their way.
  let waiting = 0
  const counted: ScanAuth = {
    ...auth,
    waitForStatus: (sceneStr, options) => {
      waiting++
      return auth.waitForStatus(sceneStr, options).finally(() => void waiting--)
    },
  }
  const app = express()
  app.use('/auth', scanAuthRouter(counted, { heartbeatMs: 600_000 }))
  server = await listen(app)
  const { url } = server
  const scenes = await Promise.all(Array.from({ length: SCENES }, () => auth.createScene({ deviceId: 'tv' })))
  const timersBefore = timers()

  const clients = Array.from({ length: WAITS }, () => new AbortController())
  // What went wrong before the aborts, reported at once instead of as a wait that never comes.
  const unexpected: string[] = []
  let retried = 0
  const requests = clients.map(async (client, i) => {
    const scene = scenes[i % SCENES]?.sceneStr as string
    const path = i % 2 === 0 ? `status?scene=${scene}&wait=30` : `events?scene=${scene}`
    const events = i % 2 === 1
    // A long poll settles only when aborted; an event stream resolves at its headers, and its body,
    // unread, stays open until the abort. A thousand connections opened at once can overflow the
    // listen backlog of a busy machine, so a request that fails before the abort (its connection
    // refused or timed out: no wait was started) is sent again.
    for (;;) {
      try {
        const response = await fetch(`${url}/auth/${path}`, { signal: client.signal })
        if (!events || response.status !== 200) unexpected.push(`${path} answered ${response.status} before its client left`)
        return
      } catch (error) {
        if (client.signal.aborted) return
        retried++
        if (retried > WAITS) {
          unexpected.push(`${path} failed again: ${String(error)}`)
          return
        }
      }
    }
  })
  const ready = (): boolean => {
    if (unexpected.length > 0) throw new Error(unexpected.slice(0, 3).join('; '))
    return waiting === WAITS
  }
  await eventually(`${WAITS} waits in progress`, ready, 60_000)
  if (retried > 0) console.log(`[aborted-waits] ${retried} requests sent again after a refused or timed-out connection`)
  expect(store.subscriptions).toBe(1)
  expect(await connections(server)).toBe(WAITS)
  expect(timers()).toBeGreaterThanOrEqual(timersBefore + WAITS)

  for (const client of clients) client.abort()
  await Promise.all(requests)
  await eventually('every wait to end', () => waiting === 0, SETTLE_MS)
  await eventually('the store subscription to be released', () => store.subscriptions === 0, SETTLE_MS)
  const listening = server
  await eventually('every connection to close', async () => (await connections(listening)) === 0, SETTLE_MS)
  await eventually('the timers of the waits to be cleared', () => timers() <= timersBefore, SETTLE_MS)
  expect(store.subscribed).toBe(1)
}, 120_000)

function connections({ server }: Listening): Promise<number> {
  return new Promise((resolve, reject) => server.getConnections((error, count) => (error ? reject(error) : resolve(count))))
}
