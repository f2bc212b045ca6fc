// Without `@opentelemetry/api` (an optional peer dependency): in a process where the package cannot
// be resolved, the notification handler answers as always and records nothing, and a tracer and a
// meter passed in `telemetry` still get the span and the count.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'

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

const url = (...path: string[]) => JSON.stringify(pathToFileURL(join(import.meta.dirname, ...path)).href)

const CHILD = `
const { createWechatPayNotificationHandler } = await import(${url('..', 'src', 'index.ts')})
const { API_V3_KEY, payPublicKey, platform, PLATFORM_SERIAL, PUB_KEY_ID } = await import(${url('support', 'keys.ts')})
const { NOW, paidNotification, RecordingAuth } = await import(${url('support', 'notify.ts')})
const blocked = await import('@opentelemetry/api').then(() => false, () => true)
const options = { verificationKeys: { [PLATFORM_SERIAL]: platform.publicPem, [PUB_KEY_ID]: payPublicKey.publicPem }, apiV3Key: API_V3_KEY, now: () => NOW }
const auth = new RecordingAuth()
const plain = await createWechatPayNotificationHandler({ auth, ...options })(paidNotification())
const spans = []
const counts = []
const tracer = { startSpan: (name) => ({ setAttribute() {}, setStatus() {}, isRecording: () => true, end: () => spans.push(name) }) }
const meter = { createCounter: () => ({ add: (n, attributes) => counts.push(attributes) }), createHistogram: () => ({ record() {} }) }
const own = await createWechatPayNotificationHandler({ auth, ...options, telemetry: { tracer, meter } })(paidNotification())
console.log(JSON.stringify({ blocked, plain: plain.status, own: own.status, applied: auth.payments.length, spans, counts }))
`

describe('without @opentelemetry/api installed', () => {
  it('the handler answers as always; an explicit tracer and meter still record', () => {
    const dir = mkdtempSync(join(tmpdir(), 'scanauth-pay-no-otel-'))
    try {
      const script = join(dir, 'child.mjs')
      writeFileSync(script, CHILD)
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
        plain: 204,
        own: 204,
        applied: 2,
        spans: ['scanauth.notification'],
        counts: [{ outcome: 'granted', kind: 'payment' }],
      })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
