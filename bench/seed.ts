/**
 * The steady state the store benches start from, the same on every backend: `users` users, each
 * scanned once (the free trial) and granted a points authorization big enough for any run; then the
 * clock moves eight days on (the trials are over) and one poll per user activates the points, so
 * every poll and consume measured afterwards runs on settled data.
 */
import { createScanAuth, type ScanAuth, type Store } from '@scanauth/core'
import { NO_RATE_LIMITS } from './lib'

const DAY = 24 * 3600 * 1000

/** The clock of a benchmark's service: read by the service, moved by the benchmark. */
export interface BenchClock {
  now(): number
  advance(ms: number): void
}

/**
 * The service every store benchmark drives, the same on every backend: a constant-URL QR provider
 * (the platform is not what is measured), sessions that outlive any run, no rate limits (the
 * benchmarks create scenes by the thousand) and a clock of the benchmark's own, from `start`.
 */
export function benchService(store: Store, start = Date.now()): { auth: ScanAuth; clock: BenchClock } {
  let now = start
  const clock: BenchClock = { now: () => now, advance: (ms) => void (now += ms) }
  const auth = createScanAuth({
    store,
    qr: { createQr: async () => ({ url: 'https://qr.example.test/constant' }) },
    sessionTtlHours: 24 * 365,
    now: clock.now,
    rateLimits: NO_RATE_LIMITS,
  })
  return { auth, clock }
}

/** What the benches drive: the users' openids, their authorized scenes, and those scenes' session tokens. */
export interface SteadyState {
  openids: string[]
  authorizedScenes: string[]
  tokens: string[]
}

/** Seeds `users` users through `auth`; `advanceClock(ms)` moves the clock `auth` was built with. */
export async function seedSteadyState(auth: ScanAuth, users: number, advanceClock: (ms: number) => void): Promise<SteadyState> {
  const state: SteadyState = { openids: [], authorizedScenes: [], tokens: [] }
  for (let i = 0; i < users; i++) {
    const openid = `bench-user-${i}`
    const { sceneStr } = await auth.createScene({ deviceId: `device-${i}` })
    await auth.handleScan({ sceneStr, openid })
    await auth.grant({ openid, type: 'points', points: 1_000_000_000, source: 'bench' })
    state.openids.push(openid)
    state.authorizedScenes.push(sceneStr)
  }
  advanceClock(8 * DAY)
  for (const sceneStr of state.authorizedScenes) {
    const status = await auth.getStatus(sceneStr)
    if (status.status !== 'authorized') throw new Error(`bench setup: ${sceneStr} is ${status.status}`)
    state.tokens.push(status.sessionToken)
  }
  return state
}
