/**
 * Requests per login: how many HTTP requests a device makes from showing a code to learning the
 * scan's outcome, polling every second, on the long poll (`status?wait=25`, docs/behaviour.md
 * B-wait-2), and on the event stream (`events`, B-wait-3). Counted, not timed: it is arithmetic,
 * checked by one real run of each way against an Express app.
 *
 * The device shows its code at 0 s (one `create_scene`) and the scan lands `T` seconds later.
 * - Polling every `P` = 1 s, half a period out of step with the scan (a poll is on average half a
 *   period away from it): polls at 0.5 s, 1.5 s, …; the first one after `T` answers, so
 *   ⌊T/P + ½⌋ + 1 polls.
 * - Long poll of `W` = 25 s: a request at 0 s, `W`, `2W`, …, each held until the scan or its end;
 *   the one in flight at `T` answers at once: ⌈T/W⌉ requests.
 * - Event stream: one request, whatever `T` (the 15 s heartbeats are comments on the same stream,
 *   not requests).
 * A code nobody scans expires at 300 s: polling makes ⌊300 + ½⌋ + 1 = 301 requests; the long poll
 * 12; the stream 1 (the server's expiry timer answers the long poll and the stream, B-wait-1).
 *
 * @module
 */
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import express from 'express'
import { createScanAuth, MemoryStore } from '@scanauth/core'
import { scanAuthRouter } from '@scanauth/express'
import { constantQr } from './stores'
import { NO_RATE_LIMITS } from './lib'

/** The ways a device waits. */
export type WaitingTransport = 'poll' | 'longPoll' | 'sse'

/** Requests per login for each way of waiting, for one scan time. */
export interface RequestsRow {
  /** Seconds from the code being shown to the scan; for `expired`, the scene lifetime (nobody scans). */
  afterSeconds: number
  expired: boolean
  /** Waiting requests (`status` or `events`), without the one `create_scene`. */
  waiting: Record<WaitingTransport, number>
}

/** What {@link benchRequests} found. */
export interface RequestsResult {
  pollSeconds: number
  waitSeconds: number
  /** The arithmetic, for several scan times. */
  rows: RequestsRow[]
  /** One real run of each way, scanned after `afterSeconds`: the requests the server counted, beside the arithmetic. */
  run: { afterSeconds: number; counted: Record<WaitingTransport, number>; expected: Record<WaitingTransport, number> }
  /**
   * The goal: the stream and the long poll need at least this many times fewer requests per login
   * than polling every second, for a scan `goalAfterSeconds` after the code appears.
   */
  targetFewer: number
  goalAfterSeconds: number
}

const POLL_SECONDS = 1
const WAIT_SECONDS = 25
const SCENE_TTL_SECONDS = 300
/** The goal of issue #13: ≥ 10× fewer requests per login than polling every second … */
export const FEWER_REQUESTS_TARGET = 10
/** … for a login scanned 20 s after the code appears (the brief's example). */
const GOAL_AFTER_SECONDS = 20

/** The arithmetic of the module comment. */
export function waitingRequests(afterSeconds: number): Record<WaitingTransport, number> {
  return {
    poll: Math.floor(afterSeconds / POLL_SECONDS + 0.5) + 1,
    longPoll: Math.max(1, Math.ceil(afterSeconds / WAIT_SECONDS)),
    sse: 1,
  }
}

/** Requests per login (the waiting ones and the `create_scene`). */
export const perLogin = (waiting: number) => waiting + 1

/** One device of the real run: waits on `scene` its way, until the status is not pending. */
async function device(base: string, scene: string, transport: WaitingTransport, t0: number): Promise<string> {
  const status = async (query: string) => ((await (await fetch(`${base}/auth/status?scene=${scene}${query}`)).json()) as { status: string }).status
  if (transport === 'poll') {
    for (let k = 1; ; k++) {
      await sleep(Math.max(0, t0 + (k - 0.5) * POLL_SECONDS * 1000 - performance.now()))
      const answer = await status('')
      if (answer !== 'pending') return answer
    }
  }
  if (transport === 'longPoll') {
    for (;;) {
      const answer = await status(`&wait=${WAIT_SECONDS}`)
      if (answer !== 'pending') return answer
    }
  }
  // The stream: read until the server ends it after the final status; keep the last status event.
  const res = await fetch(`${base}/auth/events?scene=${scene}`)
  const reader = (res.body as ReadableStream<Uint8Array>).getReader()
  const decoder = new TextDecoder()
  let text = ''
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += decoder.decode(chunk.value, { stream: true })
  const last = [...text.matchAll(/event: status\ndata: (.*)\n\n/g)].at(-1)?.[1]
  return last === undefined ? 'no status event' : (JSON.parse(last) as { status: string }).status
}

/** One real run: three devices, one per way of waiting, scanned `afterSeconds` after their codes appear. */
async function realRun(afterSeconds: number): Promise<Record<WaitingTransport, number>> {
  const auth = createScanAuth({ store: new MemoryStore(), qr: constantQr, sceneTtlSeconds: SCENE_TTL_SECONDS, rateLimits: NO_RATE_LIMITS })
  const counted = new Map<string, number>()
  const app = express()
  // Counts every waiting request by scene, before scanauth sees it.
  app.use((req, _res, next) => {
    if ((req.path === '/auth/status' || req.path === '/auth/events') && typeof req.query.scene === 'string') {
      counted.set(req.query.scene, (counted.get(req.query.scene) ?? 0) + 1)
    }
    next()
  })
  app.use('/auth', scanAuthRouter(auth))
  const server = createServer(app).listen(0, '127.0.0.1')
  await once(server, 'listening')
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  try {
    const transports: WaitingTransport[] = ['poll', 'longPoll', 'sse']
    const scenes = await Promise.all(transports.map(() => auth.createScene({ deviceId: 'bench-requests' })))
    const t0 = performance.now()
    const outcomes = Promise.all(transports.map((transport, i) => device(base, (scenes[i] as { sceneStr: string }).sceneStr, transport, t0)))
    await sleep(afterSeconds * 1000)
    for (const [i, { sceneStr }] of scenes.entries()) await auth.handleScan({ sceneStr, openid: `bench-requests-${i}` })
    const answers = await outcomes
    if (answers.some((a) => a !== 'authorized')) throw new Error(`push bench: devices answered ${answers.join(', ')}`)
    const count = (i: number) => counted.get((scenes[i] as { sceneStr: string }).sceneStr) ?? 0
    return { poll: count(0), longPoll: count(1), sse: count(2) }
  } finally {
    server.closeAllConnections()
    server.close()
  }
}

/** The arithmetic for a few scan times, and one real run scanned after `runAfterSeconds` (default 20). */
export async function benchRequests(options: { runAfterSeconds?: number } = {}): Promise<RequestsResult> {
  const runAfterSeconds = options.runAfterSeconds ?? 20
  const rows: RequestsRow[] = [5, 20, 60].map((afterSeconds) => ({ afterSeconds, expired: false, waiting: waitingRequests(afterSeconds) }))
  rows.push({ afterSeconds: SCENE_TTL_SECONDS, expired: true, waiting: waitingRequests(SCENE_TTL_SECONDS) })
  const counted = await realRun(runAfterSeconds)
  return {
    pollSeconds: POLL_SECONDS,
    waitSeconds: WAIT_SECONDS,
    rows,
    run: { afterSeconds: runAfterSeconds, counted, expected: waitingRequests(runAfterSeconds) },
    targetFewer: FEWER_REQUESTS_TARGET,
    goalAfterSeconds: GOAL_AFTER_SECONDS,
  }
}

/** The result as Markdown tables: the arithmetic, then the real run. */
export function requestsTable(r: RequestsResult): string {
  const n = (x: number, digits = 0) => x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
  const fewer = (row: RequestsRow, t: WaitingTransport) => perLogin(row.waiting.poll) / perLogin(row.waiting[t])
  // The goal is for the scan time it names; the other rows show how the ratio moves with it.
  const verdict = (row: RequestsRow, x: number) =>
    !row.expired && row.afterSeconds === r.goalAfterSeconds ? `${n(x, 1)}× (goal ≥ ${r.targetFewer}× ${x >= r.targetFewer ? '✓' : '✗'})` : `${n(x, 1)}×`
  const lines = [
    `| scan after | requests per login: polling every ${r.pollSeconds} s | long poll (wait=${r.waitSeconds}) | event stream | fewer than polling: long poll | fewer than polling: stream |`,
    '|---|---:|---:|---:|---:|---:|',
  ]
  for (const row of r.rows) {
    const when = row.expired ? `never (the code expires at ${row.afterSeconds} s)` : `${row.afterSeconds} s`
    lines.push(
      `| ${when} | ${perLogin(row.waiting.poll)} | ${perLogin(row.waiting.longPoll)} | ${perLogin(row.waiting.sse)} | ` +
        `${verdict(row, fewer(row, 'longPoll'))} | ${verdict(row, fewer(row, 'sse'))} |`,
    )
  }
  const { run } = r
  lines.push(
    '',
    `Real run, scanned after ${run.afterSeconds} s (waiting requests the server counted, without the \`create_scene\`; expected in brackets): ` +
      `polling ${run.counted.poll} (${run.expected.poll}), long poll ${run.counted.longPoll} (${run.expected.longPoll}), ` +
      `event stream ${run.counted.sse} (${run.expected.sse}).`,
  )
  return lines.join('\n')
}
