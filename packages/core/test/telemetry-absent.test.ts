// Without `@opentelemetry/api` (an optional peer dependency): the loader answers null instead of
// throwing, and a process in which the package cannot be resolved runs every operation as before,
// records nothing, and still sends spans to a tracer passed in `telemetry`.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { loadApi } from '../src/telemetry/load'

describe('loadApi', () => {
  it('answers null when the import fails, throws, or is not the API', async () => {
    const missing = Object.assign(new Error("Cannot find package '@opentelemetry/api'"), { code: 'ERR_MODULE_NOT_FOUND' })
    expect(await loadApi(() => Promise.reject(missing))).toBeNull()
    expect(
      await loadApi(() => {
        throw missing
      }),
    ).toBeNull()
    expect(await loadApi(async () => ({ trace: {} }))).toBeNull()
    expect(await loadApi(async () => null)).toBeNull()
  })

  it('takes the module, or its CommonJS default', async () => {
    const api = await import('@opentelemetry/api')
    expect(await loadApi(async () => api)).toBe(api)
    const cjs = { default: { trace: api.trace, metrics: api.metrics, context: api.context } }
    expect(await loadApi(async () => cjs)).toBe(cjs.default)
  })
})

/** A resolve hook that makes `@opentelemetry/api` unresolvable, as in an application that never installed it. */
const BLOCK_HOOK = `
export async function resolve(specifier, context, next) {
  if (specifier === '@opentelemetry/api' || specifier.startsWith('@opentelemetry/api/')) {
    const error = new Error("Cannot find package '" + specifier + "' (blocked by the test)")
    error.code = 'ERR_MODULE_NOT_FOUND'
    throw error
  }
  return next(specifier, context)
}`

const REGISTER = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(BLOCK_HOOK)}`)})`

/** The child: every operation, default telemetry, then an explicit tracer and meter. */
function childScript(coreIndex: string): string {
  return `
const { createScanAuth, MemoryStore } = await import(${JSON.stringify(pathToFileURL(coreIndex).href)})
const blocked = await import('@opentelemetry/api').then(() => false, () => true)
const qr = { createQr: async ({ sceneStr }) => ({ url: 'https://qr.example.test/' + sceneStr }) }
const auth = createScanAuth({ store: new MemoryStore(), qr, rateLimits: { perDevice: { limit: 2, windowSeconds: 60 } } })
const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
const pending = await auth.getStatus(sceneStr)
const waited = await auth.waitForStatus(sceneStr, { timeoutMs: 5 })
const scan = await auth.handleScan({ sceneStr, openid: 'o-1' })
const status = await auth.getStatus(sceneStr)
const consumed = await auth.consume({ sessionToken: status.sessionToken })
const granted = await auth.grant({ openid: 'o-1', type: 'points', points: 3 })
const revoked = await auth.revokeAuthorization({ authorizationId: granted.id })
await auth.createScene({ deviceId: 'tv' })
const limited = await auth.createScene({ deviceId: 'tv' }).then(() => 'created', (e) => e.code)

const spans = []
const counts = []
const tracer = { startSpan: (name) => ({ setAttribute() {}, setStatus() {}, isRecording: () => true, end: () => spans.push(name) }) }
const counter = { add: (n, attributes) => counts.push(attributes) }
const meter = { createCounter: () => counter, createHistogram: () => ({ record() {} }) }
const own = createScanAuth({ store: new MemoryStore(), qr, telemetry: { tracer, meter } })
const second = await own.createScene({ deviceId: 'kiosk' })
await own.handleScan({ sceneStr: second.sceneStr, openid: 'o-2' })
console.log(JSON.stringify({ blocked, pending, waited: waited.status, scan: scan.result, status: status.status, consumed: consumed.status, revoked: revoked.status, limited, spans, counts }))
`
}

describe('without @opentelemetry/api installed', () => {
  it('every operation works, nothing is recorded, and an explicit tracer and meter still are', () => {
    const dir = mkdtempSync(join(tmpdir(), 'scanauth-no-otel-'))
    try {
      const script = join(dir, 'child.mjs')
      writeFileSync(script, childScript(join(import.meta.dirname, '..', 'src', 'index.ts')))
      const child = spawnSync(process.execPath, ['--conditions=@scanauth/source', '--import', 'tsx', '--import', `data:text/javascript,${encodeURIComponent(REGISTER)}`, script], {
        cwd: join(import.meta.dirname, '..'),
        encoding: 'utf8',
        timeout: 60_000,
        env: { ...process.env, NODE_OPTIONS: '' },
      })
      expect(child.stderr).toBe('')
      expect(child.status).toBe(0)
      expect(JSON.parse(child.stdout.trim().split('\n').pop() as string)).toEqual({
        blocked: true,
        pending: { status: 'pending' },
        waited: 'pending',
        scan: 'authorized',
        status: 'authorized',
        consumed: 'ok',
        revoked: 'revoked',
        limited: 'rate_limited',
        spans: ['scanauth.create_scene', 'scanauth.scan'],
        counts: [{ result: 'authorized' }, { via: 'scan' }],
      })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
