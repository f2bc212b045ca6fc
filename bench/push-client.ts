/**
 * The device client (issue 19): a login with `@scanauth/client` against the same login read by hand
 * on the raw event stream, in one run: how many requests it takes, and how long after the scan the
 * device has its answer (scan → device, p50/p99).
 *
 * The app runs here as an application would: an Express 5 app on 127.0.0.1 (a real socket) with
 * `scanAuthRouter` at `/auth` and `wechatCallbackMiddleware` of `createWechatCallback` at
 * `/wechat/callback`, a `createScanAuth` on a `SqliteStore` (a file in a temporary folder, the
 * defaults) whose QR codes come from the WeChat emulator through `createWechatQrProvider`. The
 * emulator and the devices run in a child process (`bench/push-client-world.ts`), which takes both
 * stamps: just before the emulator's `scan()` (a signed scan event POSTed to the callback, which calls
 * `handleScan`), and when the device has its answer. Samples are sequential and alternate between
 * the raw device and the client, so that both see the same machine; each is a new user (the free
 * trial: the answer is `authorized`).
 *
 * Requests per login are counted here, by a middleware in front of `scanAuthRouter` that counts
 * every request under `/auth` during the sample (the `create_scene` included): the raw device makes
 * two (`create_scene`, `events`), and the client over the event stream must make at most
 * {@link CLIENT_MAX_REQUESTS}.
 *
 *   npx tsx --conditions=@scanauth/source bench/push-client.ts      # this part alone, printed
 *
 * @module
 */
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { pathToFileURL } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'
import express from 'express'
import { createScanAuth } from '@scanauth/core'
import { scanAuthRouter, wechatCallbackMiddleware } from '@scanauth/express'
import { createWechatCallback, createWechatQrProvider } from '@scanauth/wechat'
import { ask, startChild, stopChild } from './child'
import { CLIENT_SETTING, latencyRow, latencyTable, RAW_STREAM_SETTING, type LatencyRow } from './latency-rows'
import { NO_RATE_LIMITS, QUICK } from './lib'
import type { ClientSampled, ClientWorldReady, DeviceKind, SampleAsk } from './push-client-world'
import { openBenchStore } from './stores'

/** Issue 19: a login over the event stream with the client costs at most this many requests. */
export const CLIENT_MAX_REQUESTS = 3

/** Requests per login one device made over the samples. */
export interface LoginRequests {
  logins: number
  mean: number
  min: number
  max: number
}

/** What {@link benchClient} found. */
export interface ClientResult {
  /** Scan → device, one row per device (the raw stream first). */
  latency: LatencyRow[]
  /** Requests per login under `/auth`, `create_scene` included. */
  requests: Record<DeviceKind, LoginRequests>
  /** How the client's answers arrived (its transports, counted). */
  clientTransports: Record<string, number>
  /** The most requests per login the client may make over the event stream. */
  maxRequests: number
}

/** Options of {@link benchClient}. */
export interface BenchClientOptions {
  /** Samples per device. Default 200. */
  samples?: number
  /** Warm-up samples per device, not recorded. Default 10. */
  warmup?: number
}

/** Runs the samples; the store, the app and the child are closed whatever happens. */
export async function benchClient(options: BenchClientOptions = {}): Promise<ClientResult> {
  const { samples = 200, warmup = 10 } = options
  const opened = await openBenchStore('sqlite')
  const { child, ready } = await startChild<ClientWorldReady>('push-client-world.ts', [])
  const app = express()
  const server = createServer(app)
  try {
    const auth = createScanAuth({
      store: opened.store,
      qr: createWechatQrProvider({ appId: ready.appId, appSecret: ready.appSecret, apiBaseUrl: ready.url }),
      rateLimits: NO_RATE_LIMITS,
    })
    // Every request under /auth, by the sample it belongs to (the samples run one at a time).
    const counted: number[] = []
    let current = -1
    app.use('/auth', (_req, _res, next) => {
      if (current >= 0) counted[current] = (counted[current] ?? 0) + 1
      next()
    })
    app.use('/auth', scanAuthRouter(auth))
    app.use('/wechat/callback', wechatCallbackMiddleware(createWechatCallback({ auth, store: opened.store, appId: ready.appId, token: ready.token })))
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    await ask(child, { type: 'callback', url: `${origin}/wechat/callback` }, 'callback-set')

    const tag = Date.now().toString(36)
    const latencies: Record<DeviceKind, number[]> = { raw: [], client: [] }
    const logins: Record<DeviceKind, number[]> = { raw: [], client: [] }
    const clientTransports: Record<string, number> = {}
    const total = 2 * (warmup + samples)
    for (let i = 0; i < total; i++) {
      // Alternate, starting with the other device every other pair, so that neither always goes first.
      const device: DeviceKind = (i + (Math.floor(i / 2) % 2)) % 2 === 0 ? 'raw' : 'client'
      current = i
      const sample: SampleAsk = { type: 'sample', base: `${origin}/auth`, device, openid: `clientbench-${tag}-${i}` }
      const sampled = await ask<ClientSampled>(child, sample, 'sampled')
      if (sampled.us < 0 || sampled.status !== 'authorized') throw new Error(`client bench: the ${device} device saw ${sampled.status} (${sampled.us} µs)`)
      if (i < 2 * warmup) continue
      latencies[device].push(sampled.us)
      if (device === 'client') clientTransports[sampled.transport] = (clientTransports[sampled.transport] ?? 0) + 1
    }
    // A request a device made after its answer would land here, in the last sample's count.
    await sleep(200)
    current = -1
    for (let i = 2 * warmup; i < total; i++) {
      const device: DeviceKind = (i + (Math.floor(i / 2) % 2)) % 2 === 0 ? 'raw' : 'client'
      logins[device].push(counted[i] ?? 0)
    }
    const summary = (xs: number[]): LoginRequests => ({
      logins: xs.length,
      mean: xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length),
      min: Math.min(...xs),
      max: Math.max(...xs),
    })
    return {
      latency: [latencyRow('sqlite', RAW_STREAM_SETTING, latencies.raw, false), latencyRow('sqlite', CLIENT_SETTING, latencies.client, false)],
      requests: { raw: summary(logins.raw), client: summary(logins.client) },
      clientTransports,
      maxRequests: CLIENT_MAX_REQUESTS,
    }
  } finally {
    server.closeAllConnections()
    server.close()
    await stopChild(child)
    await opened.close()
  }
}

/** The requests per login of both devices, as a Markdown table. */
export function clientRequestsTable(r: ClientResult): string {
  const n = (x: number, digits = 0) => x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
  const transports = Object.entries(r.clientTransports).map(([t, k]) => `${t} ${k}`).join(', ')
  const lines = ['| device (Express, SqliteStore, emulator scan) | logins | requests per login: mean | min | max | goal |', '|---|---:|---:|---:|---:|---|']
  const raw = r.requests.raw
  const client = r.requests.client
  lines.push(`| raw event stream read by the bench (\`create_scene\`, \`events\`) | ${raw.logins} | ${n(raw.mean, 2)} | ${raw.min} | ${raw.max} | |`)
  lines.push(
    `| \`@scanauth/client\` \`signIn\` (default transport; answers by ${transports}) | ${client.logins} | ${n(client.mean, 2)} | ${client.min} | ${client.max} | ` +
      `≤ ${r.maxRequests} ${client.max <= r.maxRequests ? '✓' : '✗'} |`,
  )
  return lines.join('\n')
}

/** Both tables of this part, as printed. */
export function clientTables(r: ClientResult): string {
  return [latencyTable(r.latency), '', clientRequestsTable(r)].join('\n')
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(clientTables(await benchClient(QUICK ? { samples: 20, warmup: 3 } : {})))
}
