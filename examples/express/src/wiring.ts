/**
 * What both example servers (Express and Koa) share, apart from their framework: configuration from
 * the environment, the store, the WeChat side (the real API or an emulator started in-process),
 * logging, the demo page's files and its two small endpoints. The Koa example imports this file by a
 * relative path, so there is one copy.
 *
 * Environment:
 *
 * | variable | meaning |
 * |---|---|
 * | `PORT` | port to listen on (default 3000; 0 picks a free one) |
 * | `HOST` | address to listen on (default: every interface) |
 * | `SCANAUTH_STORE` | `sqlite` (default), `memory` or `redis` |
 * | `SCANAUTH_SQLITE_FILE` | SQLite file (default `./data/scanauth.sqlite`; the folder is created) |
 * | `REDIS_URL`, `SCANAUTH_REDIS_PREFIX` | Redis server (default `redis://127.0.0.1:6379`) and key prefix (default `scanauth:`) |
 * | `SCANAUTH_SCENE_TTL_SECONDS` | QR code lifetime (default 300) |
 * | `WECHAT_APP_ID`, `WECHAT_APP_SECRET`, `WECHAT_TOKEN` | the Official Account; without them an emulator is started |
 * | `WECHAT_ENCODING_AES_KEY` | safe-mode key (optional) |
 * | `WECHAT_API_BASE` | API base URL (default WeChat's), e.g. an emulator running elsewhere |
 *
 * @module
 */
import { randomBytes } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { createServer, type RequestListener, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { readFile } from 'node:fs/promises'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Redis } from 'ioredis'
import { createScanAuth, MemoryStore, SCENE_STR_PATTERN, type ScanAuth, type Store } from '@scanauth/core'
import { SqliteStore } from '@scanauth/sqlite'
import { RedisStore } from '@scanauth/redis'
import { createWechatCallback, createWechatQrProvider, type WechatCallback } from '@scanauth/wechat'
import { startWechatEmulator } from '@scanauth/wechat/emulator'

/** Where the store lives. */
export type StoreConfig =
  | { kind: 'memory' }
  | { kind: 'sqlite'; filename: string }
  | { kind: 'redis'; url: string; keyPrefix: string }

/** The WeChat side: an emulator started in-process, or an Official Account (at `apiBaseUrl`, default WeChat's). */
export type WechatConfig =
  | { kind: 'emulator' }
  | { kind: 'account'; appId: string; appSecret: string; token: string; encodingAESKey?: string; apiBaseUrl?: string }

/** Everything an example server needs; {@link configFromEnv} builds it from the environment. */
export interface ExampleConfig {
  port: number
  /** Listen address; default every interface. */
  host?: string
  store: StoreConfig
  wechat: WechatConfig
  /** QR code lifetime in seconds (core's default 300 when absent). */
  sceneTtlSeconds?: number
  /** Where log lines go. Default: standard output. */
  log?: (line: string) => void
  /** The clock of scanauth, in epoch milliseconds (tests move it to show expiry). Default `Date.now`. */
  now?: () => number
}

/** A configuration mistake, said in words a person can act on. */
export class ConfigError extends Error {
  override name = 'ConfigError'
}

/** Reads the configuration from environment variables (see the table at the top of this file). */
export function configFromEnv(env: NodeJS.ProcessEnv = process.env): ExampleConfig {
  const value = (name: string) => (env[name]?.trim() ? env[name].trim() : undefined)
  const integer = (name: string, fallback: number | undefined, max: number) => {
    const raw = value(name)
    if (raw === undefined) return fallback
    const n = Number(raw)
    if (!/^\d+$/.test(raw) || n > max) throw new ConfigError(`${name} must be an integer from 0 to ${max}, not "${raw}"`)
    return n
  }

  const kind = value('SCANAUTH_STORE') ?? 'sqlite'
  let store: StoreConfig
  if (kind === 'memory') store = { kind }
  else if (kind === 'sqlite') store = { kind, filename: resolve(value('SCANAUTH_SQLITE_FILE') ?? './data/scanauth.sqlite') }
  else if (kind === 'redis') store = { kind, url: value('REDIS_URL') ?? 'redis://127.0.0.1:6379', keyPrefix: value('SCANAUTH_REDIS_PREFIX') ?? 'scanauth:' }
  else throw new ConfigError(`SCANAUTH_STORE must be sqlite, memory or redis, not "${kind}"`)

  const account = { appId: value('WECHAT_APP_ID'), appSecret: value('WECHAT_APP_SECRET'), token: value('WECHAT_TOKEN') }
  let wechat: WechatConfig = { kind: 'emulator' }
  if (account.appId !== undefined || account.appSecret !== undefined) {
    const missing = Object.entries({ WECHAT_APP_ID: account.appId, WECHAT_APP_SECRET: account.appSecret, WECHAT_TOKEN: account.token })
      .filter(([, v]) => v === undefined)
      .map(([k]) => k)
    if (missing.length > 0) throw new ConfigError(`${missing.join(', ')} must be set too (or unset WECHAT_APP_ID and WECHAT_APP_SECRET to use the emulator)`)
    wechat = {
      kind: 'account',
      appId: account.appId as string,
      appSecret: account.appSecret as string,
      token: account.token as string,
      encodingAESKey: value('WECHAT_ENCODING_AES_KEY'),
      apiBaseUrl: value('WECHAT_API_BASE'),
    }
  } else if (value('WECHAT_API_BASE') !== undefined) {
    throw new ConfigError('WECHAT_API_BASE needs WECHAT_APP_ID, WECHAT_APP_SECRET and WECHAT_TOKEN')
  }

  return {
    port: integer('PORT', 3000, 65535) as number,
    host: value('HOST'),
    store,
    wechat,
    sceneTtlSeconds: integer('SCANAUTH_SCENE_TTL_SECONDS', undefined, 2_592_000),
  }
}

type Emulator = Awaited<ReturnType<typeof startWechatEmulator>>

/** A response of the demo endpoints, for any framework to send as JSON. */
export interface DemoResponse {
  status: number
  body: unknown
}

/** The parts an example server is assembled from. */
export interface Wiring {
  /** The scanauth instance (scene creation is logged). */
  auth: ScanAuth
  /** The WeChat push handler for `/wechat/callback`. */
  wechatCallback: WechatCallback
  /** The in-process emulator, when no account is configured. */
  emulator: Emulator | null
  log(line: string): void
  /** Call once the server listens at `baseUrl`: points the emulator's pushes at our callback. */
  listening(baseUrl: string): Promise<void>
  /** `GET /demo/config`: what the demo page should offer. */
  demoConfig(): DemoResponse
  /** `POST /demo/emulator-scan` `{scene_str, openid?}`: the emulated phone scans the scene. */
  demoScan(body: unknown): Promise<DemoResponse>
  /** Logs a request worth seeing (errors); successful polls and page files stay quiet. */
  logRequest(method: string, path: string, status: number): void
  /** Closes the emulator and the store. */
  close(): Promise<void>
}

/** Path of the demo page's files (`index.html`, `app.js`, `style.css`), served by both examples. */
export const PUBLIC_DIR = fileURLToPath(new URL('../public/', import.meta.url))

const PUBLIC_FILES: Record<string, [file: string, type: string]> = {
  '/': ['index.html', 'text/html; charset=utf-8'],
  '/index.html': ['index.html', 'text/html; charset=utf-8'],
  '/app.js': ['app.js', 'text/javascript; charset=utf-8'],
  '/style.css': ['style.css', 'text/css; charset=utf-8'],
  '/favicon.svg': ['favicon.svg', 'image/svg+xml'],
}

/** One of the demo page's files by URL path, or undefined (for servers without a static-file middleware). */
export async function publicFile(path: string): Promise<{ body: Buffer; type: string } | undefined> {
  const entry = PUBLIC_FILES[path]
  if (entry === undefined) return undefined
  return { body: await readFile(resolve(PUBLIC_DIR, entry[0])), type: entry[1] }
}

/** The emulated Official Account (any values work: the emulator and this server share them). */
const EMULATED = { appId: 'wx00e0demo00emulator', appSecret: 'emulator-app-secret', token: 'emulator-token' }

/** Builds the store, the platform and the scanauth instance for `config`. */
export async function createWiring(config: ExampleConfig, framework: string): Promise<Wiring> {
  const write = config.log ?? ((line: string) => console.log(line))
  const log = (line: string) => write(`${new Date().toISOString()} ${line}`)
  const cleanup: Array<() => Promise<unknown> | unknown> = []
  const closeAll = async () => {
    for (const step of cleanup.splice(0).reverse()) await step()
  }

  try {
    const { store, label } = await openStore(config.store, log)
    cleanup.push(() => store.close())

    let emulator: Emulator | null = null
    let account: Extract<WechatConfig, { kind: 'account' }>
    if (config.wechat.kind === 'emulator') {
      const encodingAESKey = randomBytes(32).toString('base64').slice(0, 43)
      emulator = await startWechatEmulator({ port: 0, host: '127.0.0.1', ...EMULATED, encodingAESKey })
      cleanup.push(() => emulator?.close())
      account = { kind: 'account', ...EMULATED, encodingAESKey, apiBaseUrl: emulator.url }
    } else {
      account = config.wechat
    }

    const core = createScanAuth({
      store: store.store,
      qr: createWechatQrProvider({ appId: account.appId, appSecret: account.appSecret, apiBaseUrl: account.apiBaseUrl }),
      sceneTtlSeconds: config.sceneTtlSeconds,
      now: config.now,
      hooks: {
        onScan: (e) => log(`scan ${e.sceneStr} by ${e.openid}: ${e.result}${e.userId === undefined ? '' : ` (user ${e.userId})`}`),
        onActivate: ({ authorization: a }) =>
          log(`authorization ${a.id} (${a.type}, ${a.source}) active for user ${a.userId}${a.endAt ? ` until ${a.endAt}` : ''}`),
        onHookError: (error) => log(`hook failed: ${String(error)}`),
      },
    })
    const auth: ScanAuth = {
      async createScene(input) {
        try {
          const scene = await core.createScene(input)
          log(`scene ${scene.sceneStr} created for device ${input.deviceId} (${scene.expiresIn} s)`)
          return scene
        } catch (error) {
          log(`scene creation failed: ${error instanceof Error ? error.message : String(error)}`)
          throw error
        }
      },
      getStatus: (sceneStr) => core.getStatus(sceneStr),
      handleScan: (input) => core.handleScan(input),
      grant: (input) => core.grant(input),
      consume: (input) => core.consume(input),
      verifySession: (token) => core.verifySession(token),
    }
    const wechatCallback = createWechatCallback({
      auth,
      appId: account.appId,
      token: account.token,
      encodingAESKey: account.encodingAESKey,
      onError: (error) => log(`wechat callback error: ${error instanceof Error ? error.message : String(error)}`),
    })

    const platform = emulator ? `WeChat emulator at ${emulator.url}` : `WeChat account ${account.appId}${account.apiBaseUrl ? ` via ${account.apiBaseUrl}` : ''}`
    log(`scanauth example (${framework}): store ${label}, ${platform}`)

    return {
      auth,
      wechatCallback,
      emulator,
      log,
      async listening(baseUrl) {
        await emulator?.setCallbackUrl(`${baseUrl}/wechat/callback`)
      },
      demoConfig: () => ({ status: 200, body: { framework, store: config.store.kind, emulator: emulator !== null } }),
      async demoScan(body) {
        if (emulator === null) return { status: 404, body: { detail: 'No emulator: scan the code with WeChat' } }
        const { scene_str: sceneStr, openid } = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>
        if (typeof sceneStr !== 'string' || !SCENE_STR_PATTERN.test(sceneStr)) return { status: 400, body: { detail: 'scene_str is required' } }
        if (typeof openid !== 'string' || !/^[\w-]{1,64}$/.test(openid)) return { status: 400, body: { detail: 'openid must be 1-64 letters, digits, _ or -' } }
        try {
          const push = await emulator.scan({ sceneStr, openid })
          if (push.status !== 200) throw new Error(`the callback answered ${push.status ?? 'nothing'}`)
          return { status: 200, body: { scanned: sceneStr, reply: push.reply?.Content ?? null } }
        } catch (error) {
          log(`emulated scan failed: ${error instanceof Error ? error.message : String(error)}`)
          return { status: 502, body: { detail: `The emulated scan failed: ${error instanceof Error ? error.message : String(error)}` } }
        }
      },
      logRequest(method, path, status) {
        if (status >= 400) log(`${method} ${path} -> ${status}`)
      },
      close: closeAll,
    }
  } catch (error) {
    await closeAll()
    throw error
  }
}

/** Opens the configured store; `close` releases what we opened (the file, the Redis connection). */
async function openStore(config: StoreConfig, log: (line: string) => void): Promise<{ store: { store: Store; close(): Promise<void> }; label: string }> {
  if (config.kind === 'memory') return { store: { store: new MemoryStore(), close: async () => {} }, label: 'memory' }
  if (config.kind === 'sqlite') {
    mkdirSync(dirname(config.filename), { recursive: true })
    const store = new SqliteStore({ filename: config.filename })
    return { store: { store, close: () => store.close() }, label: `sqlite ${config.filename}` }
  }
  const client = new Redis(config.url, { maxRetriesPerRequest: 2 })
  client.on('error', (error: Error) => log(`redis: ${error.message}`))
  try {
    await client.ping() // fail at start, with the reason, rather than on the first request
  } catch (error) {
    client.disconnect()
    throw new ConfigError(`cannot reach Redis at ${redactUrl(config.url)}: ${error instanceof Error ? error.message : String(error)}`)
  }
  const store = new RedisStore({ client, keyPrefix: config.keyPrefix })
  return {
    store: {
      store,
      close: async () => {
        await client.quit().catch(() => client.disconnect())
      },
    },
    label: `redis ${redactUrl(config.url)} (prefix ${config.keyPrefix})`,
  }
}

/** A Redis URL without its password, for the log. */
function redactUrl(url: string): string {
  try {
    const u = new URL(url)
    if (u.password) u.password = '***'
    return u.toString()
  } catch {
    return 'redis'
  }
}

/** A started example server. */
export interface RunningServer {
  /** Where to open the demo page, e.g. `http://localhost:3000`. */
  url: string
  port: number
  server: Server
  wiring: Wiring
  /** Stops accepting requests, lets the ones in flight finish (2 s at most), then closes the emulator and the store. */
  close(): Promise<void>
}

/** Serves `listener` as configured, tells the emulator where we are, and logs the address. */
export async function listenAndWire(listener: RequestListener, wiring: Wiring, config: ExampleConfig): Promise<RunningServer> {
  const server = createServer(listener)
  try {
    await new Promise<void>((ok, fail) => {
      server.once('error', fail)
      server.listen(config.port, config.host, () => ok())
    })
    const { port } = server.address() as AddressInfo
    const anyHost = config.host === undefined || config.host === '0.0.0.0' || config.host === '::'
    const reachable = anyHost ? '127.0.0.1' : config.host?.includes(':') ? `[${config.host}]` : config.host
    await wiring.listening(`http://${reachable}:${port}`)
    const url = `http://${anyHost ? 'localhost' : reachable}:${port}`
    wiring.log(`listening on ${url}`)
    let closing: Promise<void> | undefined
    return {
      url,
      port,
      server,
      wiring,
      close: () =>
        (closing ??= (async () => {
          await stopServer(server)
          await wiring.close()
        })()),
    }
  } catch (error) {
    await stopServer(server).catch(() => {})
    await wiring.close()
    throw error
  }
}

function stopServer(server: Server): Promise<void> {
  if (!server.listening) return Promise.resolve()
  return new Promise((ok, fail) => {
    const force = setTimeout(() => server.closeAllConnections(), 2000)
    server.close((error) => {
      clearTimeout(force)
      if (error) fail(error)
      else ok()
    })
    server.closeIdleConnections()
  })
}

/**
 * The body of `server.ts`: starts from the environment, and on SIGINT or SIGTERM closes the server,
 * the emulator and the store and exits 0 (another signal a second later exits at once with 1). A configuration
 * error is printed and exits 1.
 */
export async function main(start: (config: ExampleConfig) => Promise<RunningServer>): Promise<void> {
  let running: RunningServer
  try {
    running = await start(configFromEnv())
  } catch (error) {
    console.error(`scanauth example failed to start: ${error instanceof Error ? error.message : String(error)}`)
    process.exit(1)
  }
  let stoppingSince: number | undefined
  const stop = (signal: NodeJS.Signals) => {
    // Ctrl-C reaches npm, tsx and this process at once, and they pass it on: a repeat within a
    // second is that echo. A later one means "stop now".
    if (stoppingSince !== undefined) {
      if (Date.now() - stoppingSince > 1000) process.exit(1)
      return
    }
    stoppingSince = Date.now()
    running.wiring.log(`${signal}: shutting down`)
    running.close().then(
      () => {
        running.wiring.log('stopped')
        process.exit(0)
      },
      (error: unknown) => {
        console.error(`shutdown failed: ${String(error)}`)
        process.exit(1)
      },
    )
  }
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)
}
