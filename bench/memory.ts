/**
 * MemoryStore benchmark: each operation through `createScanAuth` on a `MemoryStore`, beside the
 * least work the same operation needs when written by hand on plain `Map`s, in the same run.
 *
 *   npx tsx --conditions=@scanauth/source bench/memory.ts
 *
 * The baselines keep the same facts (scenes by scene_str, users by openid, each user's active
 * authorization, sessions by token, a scene's latest session) in plain objects and do only what
 * docs/behaviour.md demands: the random scene_str and session token (the same CSPRNG calls), the
 * expiry checks, the status decision and the answer object. They skip what the library adds for
 * safety and generality: input validation, copies of records on load and commit, version checks,
 * the activation step over the user's live authorizations, change sets, ISO timestamps in answers
 * where the baseline has none to build. Both sides run in the same sequential loop (one call in
 * flight, every call awaited) in alternating slices (`measurePair`).
 *
 * @module
 */
import { randomBytes } from 'node:crypto'
import { pathToFileURL } from 'node:url'
import { createScanAuth, MemoryStore, type QrProvider } from '@scanauth/core'
import { markdownTable, measurePair, row, type BenchRow, type MeasureOptions, NO_RATE_LIMITS } from './lib'

const DAY = 24 * 3600 * 1000
/** Users with an authorized scene, a session and a large points authorization. */
const USERS = 200
/** Pending scenes polled in turn. */
const PENDING = 1000
const SCENE_TTL_MS = 3600 * 1000
const SESSION_TTL_MS = 365 * DAY

/** The QR provider of both sides: a constant address, so only scanauth's own work is measured. */
const constantQr: QrProvider = { createQr: async () => ({ url: 'https://qr.example.test/constant' }) }

/** The hand-written floor: plain records in plain maps. */
interface PlainScene {
  id: number
  status: 'pending' | 'authorized' | 'expired'
  expiresAt: number
  userId: number | null
}
interface PlainAuthorization {
  type: 'time' | 'points'
  endAt: number | null
  remainingPoints: number
}
interface PlainUser {
  id: number
  lastSeenAt: number
  active: PlainAuthorization | null
}
interface PlainSession {
  userId: number
  expiresAt: number
}

/** The baseline's state and operations. */
class PlainMaps {
  readonly scenes = new Map<string, PlainScene>()
  readonly userByOpenid = new Map<string, PlainUser>()
  readonly userById = new Map<number, PlainUser>()
  readonly sessions = new Map<string, PlainSession>()
  readonly latestSession = new Map<number, string>()
  private lastSceneId = 0
  private lastUserId = 0

  constructor(private readonly now: () => number) {}

  /** A pending scene under a fresh scene_str (no platform call: the setup of a baseline scan). */
  addPendingScene(): string {
    const sceneStr = `pc_${randomBytes(16).toString('hex')}`
    this.scenes.set(sceneStr, { id: ++this.lastSceneId, status: 'pending', expiresAt: this.now() + SCENE_TTL_MS, userId: null })
    return sceneStr
  }

  async createScene(qr: QrProvider) {
    const sceneStr = `pc_${randomBytes(16).toString('hex')}`
    const { url } = await qr.createQr({ sceneStr, expiresInSeconds: SCENE_TTL_MS / 1000 })
    this.scenes.set(sceneStr, { id: ++this.lastSceneId, status: 'pending', expiresAt: this.now() + SCENE_TTL_MS, userId: null })
    return { sceneStr, qrUrl: url, expiresIn: SCENE_TTL_MS / 1000 }
  }

  poll(sceneStr: string) {
    const scene = this.scenes.get(sceneStr)
    if (scene === undefined) throw new Error('unknown scene')
    const now = this.now()
    if (scene.status !== 'authorized') return { status: scene.status === 'pending' && now < scene.expiresAt ? 'pending' : 'expired' }
    const user = this.userById.get(scene.userId as number)
    const active = user?.active
    if (!active) return { status: 'need_purchase' }
    const token = this.latestSession.get(scene.id) as string
    const session = this.sessions.get(token)
    if (session === undefined || now >= session.expiresAt) return { status: 'expired' }
    return { status: 'authorized', sessionToken: token, authorization: { type: active.type, endAt: active.endAt, remainingPoints: active.remainingPoints } }
  }

  scan(sceneStr: string, openid: string) {
    const scene = this.scenes.get(sceneStr)
    const now = this.now()
    if (scene === undefined || scene.status !== 'pending' || now >= scene.expiresAt) return { result: 'invalid' }
    let user = this.userByOpenid.get(openid)
    if (user === undefined) {
      user = { id: ++this.lastUserId, lastSeenAt: now, active: { type: 'time', endAt: now + 7 * DAY, remainingPoints: 0 } }
      this.userByOpenid.set(openid, user)
      this.userById.set(user.id, user)
    }
    user.lastSeenAt = now
    scene.status = 'authorized'
    scene.userId = user.id
    const token = randomBytes(32).toString('base64url')
    this.sessions.set(token, { userId: user.id, expiresAt: now + SESSION_TTL_MS })
    this.latestSession.set(scene.id, token)
    return { result: user.active ? 'authorized' : 'need_purchase', userId: user.id }
  }

  consume(token: string, points = 1) {
    const session = this.sessions.get(token)
    const now = this.now()
    if (session === undefined || now >= session.expiresAt) throw new Error('unauthorized')
    const active = this.userById.get(session.userId)?.active
    if (!active) return { status: 'need_purchase' }
    if (active.type === 'points') {
      if (active.remainingPoints < points) return { status: 'insufficient_points' }
      active.remainingPoints -= points
    }
    return { status: 'ok', authorization: { type: active.type, endAt: active.endAt, remainingPoints: active.remainingPoints } }
  }

  /** The state after the same setup as the store's: every user on a large points authorization. */
  grantPoints(openid: string, points: number) {
    const user = this.userByOpenid.get(openid) as PlainUser
    user.active = { type: 'points', endAt: null, remainingPoints: points }
  }
}

/**
 * Runs the MemoryStore benchmark (about 12 s) and returns its rows. Each operation and its
 * baseline are measured in alternating slices of the same run.
 */
export async function benchMemory(options: MeasureOptions = {}): Promise<BenchRow[]> {
  const measureOptions: MeasureOptions = { durationMs: 1000, warmupOps: 500, ...options }
  const start = Date.parse('2026-01-01T00:00:00Z')
  let now = start
  const store = new MemoryStore()
  // Rate limits off, as in bench/sqlite.ts and bench/redis.ts: one device creates scenes by the thousand
  // and the clock stands still, so every limit would refuse.
  const auth = createScanAuth({ store, qr: constantQr, sceneTtlSeconds: SCENE_TTL_MS / 1000, sessionTtlHours: SESSION_TTL_MS / 3600_000, now: () => now, rateLimits: NO_RATE_LIMITS })
  const plain = new PlainMaps(() => now)

  // Users: scanned once (free trial), then a points authorization big enough for any run; the
  // same on both sides.
  const openids: string[] = []
  const authorizedScenes: string[] = []
  const plainAuthorizedScenes: string[] = []
  for (let i = 0; i < USERS; i++) {
    const openid = `bench-user-${i}`
    const { sceneStr } = await auth.createScene({ deviceId: `device-${i}` })
    await auth.handleScan({ sceneStr, openid })
    await auth.grant({ openid, type: 'points', points: 1_000_000_000, source: 'bench' })
    const plainScene = plain.addPendingScene()
    plain.scan(plainScene, openid)
    plain.grantPoints(openid, 1_000_000_000)
    openids.push(openid)
    authorizedScenes.push(sceneStr)
    plainAuthorizedScenes.push(plainScene)
  }
  // Eight days on, the free trials are over; one poll per user activates the points authorization,
  // so every poll and consume below runs on a steady state.
  now = start + 8 * DAY
  const tokens: string[] = []
  for (const sceneStr of authorizedScenes) {
    const status = await auth.getStatus(sceneStr)
    if (status.status !== 'authorized') throw new Error(`bench setup: ${sceneStr} is ${status.status}`)
    tokens.push(status.sessionToken)
  }
  const plainTokens = plainAuthorizedScenes.map((s) => (plain.poll(s) as { sessionToken: string }).sessionToken)
  const pending: string[] = []
  const plainPending: string[] = []
  for (let i = 0; i < PENDING; i++) {
    pending.push((await auth.createScene({ deviceId: `pending-${i}` })).sceneStr)
    plainPending.push(plain.addPendingScene())
  }

  const rows: BenchRow[] = []
  type Work = Parameters<typeof measurePair<unknown, unknown>>[0]
  const pair = async (operation: string, work: Work, baselineName: string, baseline: Work) => {
    const [measured, base] = await measurePair(work, baseline, measureOptions)
    rows.push(row('memory', operation, measured, { name: baselineName, ...base }))
  }

  await pair(
    'createScene (constant-url QR provider)',
    { run: () => auth.createScene({ deviceId: 'bench' }) },
    'random scene_str + same QR call + Map.set',
    { run: () => plain.createScene(constantQr) },
  )
  await pair(
    'pending poll',
    { run: (_, i) => auth.getStatus(pending[i % PENDING] as string) },
    'Map.get + expiry check',
    { run: (_, i) => plain.poll(plainPending[i % PENDING] as string) },
  )
  await pair(
    'authorized poll',
    { run: (_, i) => auth.getStatus(authorizedScenes[i % USERS] as string) },
    'scene, user, active authorization, latest session from Maps',
    { run: (_, i) => plain.poll(plainAuthorizedScenes[i % USERS] as string) },
  )
  await pair(
    'scan (known user)',
    {
      setup: async () => (await auth.createScene({ deviceId: 'scan' })).sceneStr,
      run: (sceneStr, i) => auth.handleScan({ sceneStr: sceneStr as string, openid: openids[i % USERS] as string }),
    },
    'Map lookups + scene update + random token + session Map.set',
    {
      setup: () => plain.addPendingScene(),
      run: (sceneStr, i) => plain.scan(sceneStr as string, openids[i % USERS] as string),
    },
  )
  await pair(
    'consume (1 point)',
    { run: (_, i) => auth.consume({ sessionToken: tokens[i % USERS] as string }) },
    'session Map.get + decrement',
    { run: (_, i) => plain.consume(plainTokens[i % USERS] as string) },
  )
  return rows
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const began = performance.now()
  const rows = await benchMemory()
  console.log(markdownTable(rows))
  console.log(`\n(${((performance.now() - began) / 1000).toFixed(1)} s, Node ${process.version})`)
}
