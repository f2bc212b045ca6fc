/**
 * Model-based tests: random sequences of create / scan / poll / grant / consume / advance-clock run
 * against `createScanAuth` over a MemoryStore and against a plain reference model; every answer must
 * agree, and the invariants must hold after every step.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createScanAuth, MemoryStore, ScanAuthError } from '@scanauth/core'
import { checkInvariants, ManualClock, RecordingQrProvider } from '@scanauth/testkit'
import { ReferenceModel } from './model/reference-model'

const SCENE_S = 60
const SESSION_H = 2
const FREE_D = 1
/** Property runs; each is a random sequence of up to 60 commands (about 30 000 operations in all). */
export const MODEL_RUNS = 1000

type Command =
  | { op: 'create'; device: number }
  | { op: 'scan'; scene: number; user: number }
  | { op: 'poll'; scene: number }
  | { op: 'grantTime'; user: number; seconds: number }
  | { op: 'grantPoints'; user: number; points: number }
  | { op: 'consume'; session: number; points: number }
  | { op: 'advance'; ms: number }

const command: fc.Arbitrary<Command> = fc.oneof(
  fc.record({ op: fc.constant('create' as const), device: fc.nat(3) }),
  fc.record({ op: fc.constant('scan' as const), scene: fc.nat(12), user: fc.nat(4) }),
  fc.record({ op: fc.constant('poll' as const), scene: fc.nat(12) }),
  fc.record({ op: fc.constant('grantTime' as const), user: fc.nat(4), seconds: fc.integer({ min: 1, max: 7200 }) }),
  fc.record({ op: fc.constant('grantPoints' as const), user: fc.nat(4), points: fc.integer({ min: 1, max: 4 }) }),
  fc.record({ op: fc.constant('consume' as const), session: fc.nat(12), points: fc.integer({ min: 1, max: 3 }) }),
  // Small steps, exact boundaries, and jumps past every lifetime.
  fc.record({ op: fc.constant('advance' as const), ms: fc.oneof(fc.constantFrom(1, 1000, SCENE_S * 1000, 3_600_000, 86_400_000), fc.integer({ min: 0, max: 10 * 3_600_000 })) }),
)

/** The item at `index` modulo the length (so most commands hit something that exists); one index past it names nothing. */
function pick<T>(items: T[], index: number): T | undefined {
  return index % (items.length + 1) === items.length ? undefined : items[index % (items.length + 1)]
}

async function run(commands: Command[]) {
  const clock = new ManualClock()
  const store = new MemoryStore()
  const auth = createScanAuth({ store, qr: new RecordingQrProvider(), now: clock.now, sceneTtlSeconds: SCENE_S, sessionTtlHours: SESSION_H, freeTrialDays: FREE_D })
  const model = new ReferenceModel({ sceneMs: SCENE_S * 1000, sessionMs: SESSION_H * 3_600_000, freeMs: FREE_D * 86_400_000 })
  const scenes: string[] = []
  const tokens = () => store.snapshot().sessions.sort((a, b) => a.id - b.id).map((s) => s.token)
  const processedScans = new Map<string, number>()

  for (const c of commands) {
    const now = clock.now()
    let real: string
    let expected: string
    switch (c.op) {
      case 'create': {
        const { sceneStr } = await auth.createScene({ deviceId: `device-${c.device}` })
        scenes.push(sceneStr)
        model.createScene(sceneStr, `device-${c.device}`, now)
        continue
      }
      case 'scan': {
        const sceneStr = pick(scenes, c.scene) ?? `pc_${'f'.repeat(32)}`
        const before = new Set(tokens())
        real = (await auth.handleScan({ sceneStr, openid: `user-${c.user}` })).result
        const token = tokens().find((t) => !before.has(t)) ?? 'none'
        expected = model.scan(sceneStr, `user-${c.user}`, token, now)
        if (real !== 'invalid') processedScans.set(sceneStr, (processedScans.get(sceneStr) ?? 0) + 1)
        break
      }
      case 'poll': {
        const sceneStr = pick(scenes, c.scene) ?? `pc_${'e'.repeat(32)}`
        real = await auth.getStatus(sceneStr).then((r) => r.status, (e: ScanAuthError) => String(e.status))
        expected = model.poll(sceneStr, now)
        break
      }
      case 'grantTime':
        real = (await auth.grant({ openid: `user-${c.user}`, type: 'time', durationSeconds: c.seconds })).status
        expected = model.grant(`user-${c.user}`, { type: 'time', seconds: c.seconds }, now)
        break
      case 'grantPoints':
        real = (await auth.grant({ openid: `user-${c.user}`, type: 'points', points: c.points })).status
        expected = model.grant(`user-${c.user}`, { type: 'points', points: c.points }, now)
        break
      case 'consume': {
        const token = pick(tokens(), c.session) ?? 'no-such-token'
        real = await auth.consume({ sessionToken: token, points: c.points }).then(
          (r) => (r.status === 'ok' ? (r.authorization.type === 'time' ? 'ok:time' : `ok:points:${r.authorization.remainingPoints}`) : r.status),
          (e: ScanAuthError) => String(e.status),
        )
        expected = model.consume(token, c.points, now)
        break
      }
      case 'advance':
        clock.advance(c.ms)
        continue
    }
    expect(real, `${JSON.stringify(c)} at ${now}`).toBe(expected)
    const snapshot = store.snapshot()
    expect(checkInvariants(snapshot)).toEqual([])
    for (const count of processedScans.values()) expect(count).toBe(1)
  }
}

describe('model-based: createScanAuth agrees with a reference model of docs/behaviour.md', () => {
  it(`holds for ${MODEL_RUNS} random command sequences`, async () => {
    await fc.assert(fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 60 }), run), { numRuns: MODEL_RUNS })
  })
})
