/**
 * One app process of `bench/scaling.ts`: a `createScanAuth` on a `RedisStore` (the key prefix the
 * parent gives), driven by `lanes` concurrent callers, one phase at a time, on the parent's word.
 *
 *   argv: <keyPrefix> <process index> <lanes>      env: REDIS_URL
 *
 * Phases (each runs for `durationMs`, then reports its figures over IPC):
 * - `createScene`: new scenes (constant-url QR provider); they become the pool of the next phases;
 * - `pending poll`: `getStatus` of the pool's scenes in turn, all pending;
 * - `scan`: `handleScan` of the pool's scenes, each once, by one returning user per lane (so no two
 *   lanes race for a user: this measures throughput, not conflicts); a lane stops if the pool runs out;
 * - `authorized poll`: `getStatus` of the scanned scenes in turn.
 *
 * @module
 */
import { Redis } from 'ioredis'
import { createScanAuth } from '@scanauth/core'
import { RedisStore } from '@scanauth/redis'
import { NO_RATE_LIMITS } from './lib'

/** A phase of the scaling benchmark. */
export type ScalingPhase = 'createScene' | 'pending poll' | 'scan' | 'authorized poll'

/** What the parent sends. */
export type ScalingCommand = { type: 'phase'; phase: ScalingPhase; durationMs: number } | { type: 'close' }

/** What a worker answers to a phase. */
export interface PhaseReport {
  type: 'done'
  phase: ScalingPhase
  /** Calls completed. */
  count: number
  /** Wall-clock time of the phase, ms. */
  wallMs: number
  /** CPU time this process used during the phase, µs. */
  cpuUs: number
  /** Latency of every call, µs. */
  samplesUs: number[]
  /** True when the scene pool ran out before the phase's time was up. */
  exhausted: boolean
}

async function main(): Promise<void> {
  const [prefix, indexText, lanesText] = process.argv.slice(2)
  if (process.send === undefined || prefix === undefined) throw new Error('bench/scaling-worker.ts runs as a child of bench/scaling.ts')
  const index = Number(indexText)
  const lanes = Number(lanesText ?? 16)
  const client = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')
  const auth = createScanAuth({
    store: new RedisStore({ client, keyPrefix: prefix }),
    qr: { createQr: async () => ({ url: 'https://qr.example.test/constant' }) },
    sceneTtlSeconds: 3600,
    // Off, as in bench/redis.ts: the phases create and poll scenes by the thousand.
    rateLimits: NO_RATE_LIMITS,
  })
  const pool: string[] = []
  const scanned: string[] = []
  let scanNext = 0

  const runPhase = async (phase: ScalingPhase, durationMs: number): Promise<PhaseReport> => {
    const samplesUs: number[] = []
    let exhausted = false
    let next = 0
    const call = async (lane: number): Promise<boolean> => {
      const i = next++
      switch (phase) {
        case 'createScene':
          pool.push((await auth.createScene({ deviceId: `scale-${index}` })).sceneStr)
          return true
        case 'pending poll':
          await auth.getStatus(pool[i % pool.length] as string)
          return true
        case 'scan': {
          if (scanNext >= pool.length) return false
          const sceneStr = pool[scanNext++] as string
          const { result } = await auth.handleScan({ sceneStr, openid: `scale-${index}-${lane}` })
          if (result !== 'authorized') throw new Error(`scan answered ${result}`)
          scanned.push(sceneStr)
          return true
        }
        case 'authorized poll':
          await auth.getStatus(scanned[i % scanned.length] as string)
          return true
      }
    }
    const cpuBefore = process.cpuUsage()
    const began = performance.now()
    const stopAt = began + durationMs
    await Promise.all(
      Array.from({ length: lanes }, async (_, lane) => {
        while (performance.now() < stopAt) {
          const start = process.hrtime.bigint()
          if (!(await call(lane))) {
            exhausted = true
            return
          }
          samplesUs.push(Number(process.hrtime.bigint() - start) / 1000)
        }
      }),
    )
    const wallMs = performance.now() - began
    const cpu = process.cpuUsage(cpuBefore)
    return { type: 'done', phase, count: samplesUs.length, wallMs, cpuUs: cpu.user + cpu.system, samplesUs, exhausted }
  }

  process.on('message', (command: ScalingCommand) => {
    if (command.type === 'phase') {
      runPhase(command.phase, command.durationMs).then(
        (report) => process.send?.(report),
        (error: unknown) => process.send?.({ type: 'error', message: error instanceof Error ? error.message : String(error) }),
      )
    } else if (command.type === 'close') {
      void client.quit().finally(() => process.disconnect?.())
    }
  })
  // The parent went away without saying so: do not outlive it.
  process.on('disconnect', () => {
    client.disconnect()
    process.exit(0)
  })
  await client.ping()
  process.send({ type: 'ready' })
}

await main()
