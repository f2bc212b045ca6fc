// OpenTelemetry: with an SDK registered globally, as an application does, scanauth's operations make
// spans by name with their outcome, and its metrics count scans, logins, refusals and measure the
// scan-to-device latency; no attribute ever holds a credential or an openid; `telemetry: false`
// records nothing, and `{ tracer, meter }` records to those instead of the global ones.
import { SpanKind, SpanStatusCode, metrics, trace } from '@opentelemetry/api'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createScanAuth, MemoryStore, ScanAuthError, type ScanAuth, type ScanAuthOptions, type ScanResult } from '@scanauth/core'
import { ManualClock, RecordingQrProvider, TEST_PLANS, TestPaymentService, TestWebOAuth } from '@scanauth/testkit'
import { inMemoryProviders, registerInMemorySdk, spanAttributeText, type InMemorySdk } from './support/telemetry'

let sdk: InMemorySdk
beforeEach(() => {
  sdk = registerInMemorySdk()
})
afterEach(async () => {
  await sdk.unregister()
})

const DAY = 86_400_000

function makeAuth(extra: Partial<ScanAuthOptions> = {}) {
  const clock = new ManualClock()
  const qr = new RecordingQrProvider()
  const store = new MemoryStore()
  const auth = createScanAuth({ store, qr, now: clock.now, ...extra })
  return { auth, clock, qr, store }
}

/** The attributes of the one span with this name (failing unless there is exactly one). */
function only(name: string) {
  const spans = sdk.spansNamed(name)
  expect(spans, `spans named ${name}`).toHaveLength(1)
  return spans[0] as (typeof spans)[number]
}

/** A request span around `work`, as HTTP instrumentation would make: the parent of what runs inside. */
async function inRequest<T>(work: () => Promise<T>): Promise<{ result: T; spanId: string }> {
  return trace.getTracer('test-http').startActiveSpan('GET /auth/status', { kind: SpanKind.SERVER }, async (span) => {
    try {
      return { result: await work(), spanId: span.spanContext().spanId }
    } finally {
      span.end()
    }
  })
}

async function rejection(promise: Promise<unknown>): Promise<ScanAuthError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(ScanAuthError)
  return error as ScanAuthError
}

describe('spans of the scan journey', () => {
  it('create_scene, scan and status spans carry the outcome; scans and logins are counted; scan_to_device measured once', async () => {
    const { auth, clock } = makeAuth()
    const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
    const created = only('scanauth.create_scene')
    expect(created.kind).toBe(SpanKind.INTERNAL)
    expect(created.status.code).toBe(SpanStatusCode.UNSET)
    expect(created.attributes).toEqual({})

    // A pending poll outside a trace makes no span: a device asks that every second.
    expect(await auth.getStatus(sceneStr)).toEqual({ status: 'pending' })
    expect(sdk.spansNamed('scanauth.status')).toEqual([])
    // Inside a request's trace it does, as a child of the request's span.
    const { spanId } = await inRequest(() => auth.getStatus(sceneStr))
    const pending = only('scanauth.status')
    expect(pending.attributes).toEqual({ 'scanauth.status': 'pending' })
    expect(pending.parentSpanContext?.spanId).toBe(spanId)
    // Timed on the poll's own clock readings: it starts now (real time, not the test's clock) and lasts a little.
    const startMs = pending.startTime[0] * 1000 + pending.startTime[1] / 1e6
    expect(Math.abs(startMs - Date.now())).toBeLessThan(60_000)
    expect(pending.duration[0] * 1e9 + pending.duration[1]).toBeGreaterThan(0)
    expect(pending.duration[0]).toBe(0)

    clock.advance(10_000)
    expect((await auth.handleScan({ sceneStr, openid: 'o-alice' })).result).toBe('authorized')
    expect(only('scanauth.scan').attributes).toEqual({ 'scanauth.result': 'authorized' })

    clock.advance(1_234)
    const status = await auth.getStatus(sceneStr)
    expect(status.status).toBe('authorized')
    const answers = sdk.spansNamed('scanauth.status').map((s) => s.attributes['scanauth.status'])
    expect(answers).toEqual(['pending', 'authorized'])
    // Polled again (a retry): still one measurement for the scene.
    await auth.getStatus(sceneStr)

    expect(await sdk.points('scanauth.scans')).toEqual([{ attributes: { result: 'authorized' }, value: 1 }])
    expect(await sdk.points('scanauth.logins')).toEqual([{ attributes: { via: 'scan' }, value: 1 }])
    expect(await sdk.points('scanauth.scan_to_device')).toEqual([{ attributes: {}, value: 1_234, count: 1 }])
  })

  it('need_purchase and invalid scans; a device given access by a later grant is not measured as a scan', async () => {
    const { auth, clock } = makeAuth({ freeTrialDays: 1 })
    const trial = await auth.createScene({ deviceId: 'tv' })
    await auth.handleScan({ sceneStr: trial.sceneStr, openid: 'o-bob' })
    await auth.getStatus(trial.sceneStr)
    clock.advance(2 * DAY)
    const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
    expect((await auth.handleScan({ sceneStr, openid: 'o-bob' })).result).toBe('need_purchase')
    expect((await auth.handleScan({ sceneStr, openid: 'o-bob' })).result).toBe('invalid')
    expect((await auth.handleScan({ sceneStr: 'pc_' + '0'.repeat(32), openid: 'o-bob' })).result).toBe('invalid')
    expect(sdk.spansNamed('scanauth.scan').map((s) => s.attributes['scanauth.result'])).toEqual(['authorized', 'need_purchase', 'invalid', 'invalid'])

    expect((await auth.getStatus(sceneStr)).status).toBe('need_purchase')
    // Granted in the same millisecond as the scan, still after it: not the scan's latency.
    await auth.grant({ openid: 'o-bob', type: 'time', durationSeconds: 3600 })
    clock.advance(60_000)
    expect((await auth.getStatus(sceneStr)).status).toBe('authorized')
    expect(sdk.spansNamed('scanauth.status').map((s) => s.attributes['scanauth.status'])).toEqual(['authorized', 'need_purchase', 'authorized'])

    const scans = await sdk.points('scanauth.scans')
    expect(scans).toEqual(
      expect.arrayContaining([
        { attributes: { result: 'authorized' }, value: 1 },
        { attributes: { result: 'need_purchase' }, value: 1 },
        { attributes: { result: 'invalid' }, value: 2 },
      ]),
    )
    expect(scans).toHaveLength(3)
    expect(await sdk.points('scanauth.logins')).toEqual([{ attributes: { via: 'scan' }, value: 1 }])
    // The trial scene was measured (0 ms: the same clock reading); the granted one was not.
    expect(await sdk.points('scanauth.scan_to_device')).toEqual([{ attributes: {}, value: 0, count: 1 }])
  })

  it('a wait makes a scanauth.wait span with the status it answered (and measures scan_to_device)', async () => {
    const { auth, clock } = makeAuth()
    const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
    expect(await auth.waitForStatus(sceneStr, { timeoutMs: 5 })).toEqual({ status: 'pending' })
    const waiting = auth.waitForStatus(sceneStr, { timeoutMs: 10_000 })
    await auth.handleScan({ sceneStr, openid: 'o-carol' })
    clock.advance(40)
    expect((await waiting).status).toBe('authorized')
    expect(sdk.spansNamed('scanauth.wait').map((s) => s.attributes)).toEqual([{ 'scanauth.status': 'pending' }, { 'scanauth.status': 'authorized' }])
    // The wait's read came before the clock moved, or after: either way one measurement.
    expect((await sdk.points('scanauth.scan_to_device'))[0]?.count).toBe(1)
  })
})

describe('spans of entitlements and purchases', () => {
  it('grant, consume and revoke carry the authorization, the result, and expected failures without ERROR', async () => {
    const { auth } = makeAuth()
    const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
    await auth.handleScan({ sceneStr, openid: 'o-dave' })
    const status = await auth.getStatus(sceneStr)
    if (status.status !== 'authorized') throw new Error('expected authorized')
    const granted = await auth.grant({ openid: 'o-dave', type: 'points', points: 5, source: 'campaign-for-o-dave' })
    expect(only('scanauth.grant').attributes).toEqual({
      'scanauth.authorization.type': 'points',
      'scanauth.authorization.status': 'pending',
      // An application's own source is not recorded: it might say anything.
      'scanauth.authorization.source': 'other',
    })
    await auth.consume({ sessionToken: status.sessionToken })
    await auth.revokeAuthorization({ authorizationId: granted.id, reason: 'refund' })
    expect(only('scanauth.revoke').attributes).toMatchObject({ 'scanauth.authorization.status': 'revoked', 'scanauth.authorization.type': 'points' })
    await rejection(auth.consume({ sessionToken: 'not-a-session' }))
    const consumes = sdk.spansNamed('scanauth.consume')
    expect(consumes.map((s) => s.attributes)).toEqual([
      { 'scanauth.result': 'ok', 'scanauth.authorization.type': 'time' },
      { 'error.type': 'unauthorized' },
    ])
    expect(consumes.map((s) => s.status.code)).toEqual([SpanStatusCode.UNSET, SpanStatusCode.UNSET])
  })

  it('a purchase carries its plan; the store and the payment service calls nest under the active span', async () => {
    const clock = new ManualClock()
    const service = new TestPaymentService(clock.now)
    const inner = trace.getTracer('test-store')
    const store = new MemoryStore()
    // A store instrumented the way a database driver's instrumentation would be: a span per read.
    const load = store.load.bind(store)
    store.load = ((query: Parameters<MemoryStore['load']>[0]) => inner.startActiveSpan('store.load', (span) => load(query).finally(() => span.end()))) as MemoryStore['load']
    const auth = createScanAuth({ store, qr: new RecordingQrProvider(), now: clock.now, freeTrialDays: 1, payments: { provider: service, plans: TEST_PLANS } })
    const trial = await auth.createScene({ deviceId: 'tv' })
    await auth.handleScan({ sceneStr: trial.sceneStr, openid: 'o-erin' })
    clock.advance(2 * DAY)
    const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
    await auth.handleScan({ sceneStr, openid: 'o-erin' })
    sdk.exporter.reset()
    const { orderId } = await auth.purchase({ sceneStr, plan: 'days-30' })
    const purchase = only('scanauth.purchase')
    expect(purchase.attributes).toEqual({ 'scanauth.plan': 'days-30', 'scanauth.purchase.by': 'scene' })
    const loads = sdk.spansNamed('store.load')
    expect(loads.length).toBeGreaterThan(0)
    for (const span of loads) expect(span.parentSpanContext?.spanId).toBe(purchase.spanContext().spanId)

    await auth.applyPayment(service.pay(orderId))
    expect((await auth.getStatus(sceneStr)).status).toBe('authorized')
    const refused = await rejection(auth.purchase({ sceneStr, plan: 'no-such-plan' }))
    expect(refused.code).toBe('plan_not_found')
    expect(sdk.spansNamed('scanauth.purchase')[1]?.attributes).toEqual({ 'error.type': 'plan_not_found' })
  })
})

describe('refusals and failures', () => {
  it('each rate limit is counted by name and marked on its span, without ERROR', async () => {
    const { auth } = makeAuth({
      rateLimits: { perDevice: { limit: 1, windowSeconds: 60 }, perAddress: { limit: 2, windowSeconds: 60 }, dailyQrBudget: 3, statusPollsPerScene: { limit: 1, windowSeconds: 60 } },
    })
    const { sceneStr } = await auth.createScene({ deviceId: 'a', clientAddress: '203.0.113.1' })
    expect((await rejection(auth.createScene({ deviceId: 'a', clientAddress: '203.0.113.2' }))).code).toBe('rate_limited')
    await auth.createScene({ deviceId: 'b', clientAddress: '203.0.113.1' })
    expect((await rejection(auth.createScene({ deviceId: 'c', clientAddress: '203.0.113.1' }))).code).toBe('rate_limited')
    await auth.createScene({ deviceId: 'd', clientAddress: '203.0.113.3' })
    expect((await rejection(auth.createScene({ deviceId: 'e', clientAddress: '203.0.113.4' }))).code).toBe('rate_limited')
    await auth.getStatus(sceneStr)
    expect((await rejection(auth.getStatus(sceneStr))).code).toBe('rate_limited')
    expect((await rejection(auth.waitForStatus(sceneStr, { timeoutMs: 1000 }))).code).toBe('rate_limited')

    const refusedCreates = sdk.spansNamed('scanauth.create_scene').filter((s) => s.attributes['error.type'] !== undefined)
    expect(refusedCreates.map((s) => s.attributes)).toEqual([
      { 'error.type': 'rate_limited', 'scanauth.limit': 'device' },
      { 'error.type': 'rate_limited', 'scanauth.limit': 'address' },
      { 'error.type': 'rate_limited', 'scanauth.limit': 'budget' },
    ])
    expect(only('scanauth.status').attributes).toEqual({ 'error.type': 'rate_limited', 'scanauth.limit': 'poll' })
    expect(only('scanauth.wait').attributes).toEqual({ 'error.type': 'rate_limited', 'scanauth.limit': 'poll' })
    expect(sdk.spans().every((s) => s.status.code === SpanStatusCode.UNSET)).toBe(true)
    const limits = await sdk.points('scanauth.rate_limited')
    expect(limits).toEqual(
      expect.arrayContaining([
        { attributes: { limit: 'device' }, value: 1 },
        { attributes: { limit: 'address' }, value: 1 },
        { attributes: { limit: 'budget' }, value: 1 },
        { attributes: { limit: 'poll' }, value: 2 },
      ]),
    )
    expect(limits).toHaveLength(4)
  })

  it('a purchase limit marks its refusal purchase_user or purchase_address (B-rate-10, B-rate-11)', async () => {
    const service = new TestPaymentService(Date.now)
    const { auth } = makeAuth({
      payments: { provider: service, plans: TEST_PLANS },
      rateLimits: { purchasesPerUser: { limit: 1, windowSeconds: 600 }, purchasesPerAddress: { limit: 2, windowSeconds: 600 } },
    })
    const tokenOf = async (openid: string) => {
      const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
      await auth.handleScan({ sceneStr, openid })
      const status = await auth.getStatus(sceneStr)
      if (status.status !== 'authorized') throw new Error('expected authorized')
      return status.sessionToken
    }
    const [a, b, c] = [await tokenOf('o-pat'), await tokenOf('o-quinn'), await tokenOf('o-ray')]
    await auth.purchase({ sessionToken: a, plan: 'days-30', clientAddress: '198.51.100.1' })
    expect((await rejection(auth.purchase({ sessionToken: a, plan: 'days-30' }))).code).toBe('rate_limited')
    await auth.purchase({ sessionToken: b, plan: 'days-30', clientAddress: '198.51.100.1' })
    expect((await rejection(auth.purchase({ sessionToken: c, plan: 'days-30', clientAddress: '198.51.100.1' }))).code).toBe('rate_limited')
    const refused = sdk.spansNamed('scanauth.purchase').filter((s) => s.attributes['error.type'] !== undefined)
    expect(refused.map((s) => s.attributes['scanauth.limit'])).toEqual(['purchase_user', 'purchase_address'])
    expect(await sdk.points('scanauth.rate_limited')).toEqual(
      expect.arrayContaining([
        { attributes: { limit: 'purchase_user' }, value: 1 },
        { attributes: { limit: 'purchase_address' }, value: 1 },
      ]),
    )
  })

  it('unexpected failures set ERROR with their code or class, never their message; expected ones do not', async () => {
    const { auth, qr, store } = makeAuth()
    qr.failWith = 'quota used up for token abc123'
    expect((await rejection(auth.createScene({ deviceId: 'tv' }))).code).toBe('qr_creation_failed')
    const failed = only('scanauth.create_scene')
    expect(failed.status).toEqual({ code: SpanStatusCode.ERROR, message: 'qr_creation_failed' })
    expect(failed.attributes).toEqual({ 'error.type': 'qr_creation_failed' })
    expect(failed.events).toEqual([])

    qr.failWith = null
    const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
    await auth.handleScan({ sceneStr, openid: 'o-frank' })
    expect((await rejection(auth.getStatus('pc_' + 'f'.repeat(32)))).code).toBe('scene_not_found')
    store.load = async () => {
      throw new TypeError('connection reset while reading session tok_secret')
    }
    await expect(auth.getStatus(sceneStr)).rejects.toThrow(TypeError)
    const statuses = sdk.spansNamed('scanauth.status')
    expect(statuses.map((s) => [s.attributes, s.status])).toEqual([
      [{ 'error.type': 'scene_not_found' }, { code: SpanStatusCode.UNSET }],
      [{ 'error.type': 'TypeError' }, { code: SpanStatusCode.ERROR, message: 'TypeError' }],
    ])
    expect(spanAttributeText(sdk.spans()).join('\n')).not.toMatch(/abc123|tok_secret|quota/)
  })

  it('a tracer or meter that throws costs its own data, never the operation', async () => {
    const broken = {
      startSpan: () => {
        throw new Error('tracer broken')
      },
    }
    const brokenMeter = {
      createCounter: () => ({
        add: () => {
          throw new Error('meter broken')
        },
      }),
      createHistogram: () => ({
        record: () => {
          throw new Error('meter broken')
        },
      }),
    }
    const { auth } = makeAuth({ telemetry: { tracer: broken, meter: brokenMeter } })
    const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
    expect((await auth.handleScan({ sceneStr, openid: 'o-gina' })).result).toBe('authorized')
    expect((await auth.getStatus(sceneStr)).status).toBe('authorized')
  })
})

describe('confirm on the phone', () => {
  it('scanned scans, the confirm decision and the login it makes', async () => {
    const oauth = new TestWebOAuth()
    const { auth } = makeAuth({ confirm: 'link', confirmation: { url: 'https://app.example.test/auth/confirm', oauth } })
    const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
    const scan = (await auth.handleScan({ sceneStr, openid: 'o-hank' })) as ScanResult & { result: 'scanned' }
    expect(scan.result).toBe('scanned')
    // `scanned` is a waiting answer, like `pending`: no span outside a trace.
    expect((await auth.getStatus(sceneStr)).status).toBe('scanned')
    expect(sdk.spansNamed('scanauth.status')).toEqual([])
    const first = await auth.openConfirmation({ ticket: scan.ticket })
    if (first.step !== 'authorize') throw new Error('expected the OAuth redirect')
    const state = new URL(first.location).searchParams.get('state') as string
    const page = await auth.openConfirmation({ ticket: scan.ticket, code: oauth.issueCode('o-hank'), state })
    if (page.step !== 'decide') throw new Error('expected the page')
    expect((await auth.decideConfirmation({ ticket: scan.ticket, csrf: page.csrf, decision: 'confirm' })).result).toBe('authorized')
    expect(only('scanauth.confirm').attributes).toEqual({ 'scanauth.result': 'authorized' })
    expect(only('scanauth.scan').attributes).toEqual({ 'scanauth.result': 'scanned' })
    expect(await sdk.points('scanauth.scans')).toEqual([{ attributes: { result: 'scanned' }, value: 1 }])
    expect(await sdk.points('scanauth.confirmations')).toEqual([{ attributes: { result: 'authorized' }, value: 1 }])
    expect(await sdk.points('scanauth.logins')).toEqual([{ attributes: { via: 'confirm' }, value: 1 }])
  })
})

describe('what telemetry never holds', () => {
  it('no session token, ticket, CSRF token, poll secret, openid or scene_str in any span or metric point', async () => {
    const oauth = new TestWebOAuth()
    const secrets: string[] = []
    const { auth: link } = makeAuth({ confirm: 'link', confirmation: { url: 'https://app.example.test/auth/confirm', oauth }, requirePollSecret: true })
    const created = await link.createScene({ deviceId: 'tv-living-room', clientAddress: '198.51.100.7' })
    const scan = (await link.handleScan({ sceneStr: created.sceneStr, openid: 'o-secret-openid-1' })) as ScanResult & { result: 'scanned' }
    const first = await link.openConfirmation({ ticket: scan.ticket })
    const state = new URL((first as { location: string }).location).searchParams.get('state') as string
    const page = await link.openConfirmation({ ticket: scan.ticket, code: oauth.issueCode('o-secret-openid-1'), state })
    const csrf = (page as { csrf: string }).csrf
    await link.decideConfirmation({ ticket: scan.ticket, csrf, decision: 'confirm' })
    await rejection(link.getStatus(created.sceneStr))
    const status = await inRequest(() => link.getStatus(created.sceneStr, { pollSecret: created.pollSecret }))
    if (status.result.status !== 'authorized') throw new Error('expected authorized')
    secrets.push(created.sceneStr, created.pollSecret as string, scan.ticket, csrf, 'o-secret-openid-1', status.result.sessionToken)

    const { auth } = makeAuth()
    const plain = await auth.createScene({ deviceId: 'kiosk' })
    await auth.handleScan({ sceneStr: plain.sceneStr, openid: 'o-secret-openid-2' })
    const answer = await auth.waitForStatus(plain.sceneStr, { timeoutMs: 1000 })
    if (answer.status !== 'authorized') throw new Error('expected authorized')
    await auth.consume({ sessionToken: answer.sessionToken, idempotencyKey: 'idem-key-secretish' })
    await rejection(auth.consume({ sessionToken: 'tok-not-valid-secret' }))
    await auth.grant({ openid: 'o-secret-openid-2', type: 'time', durationSeconds: 60 })
    secrets.push(plain.sceneStr, 'o-secret-openid-2', answer.sessionToken, 'idem-key-secretish', 'tok-not-valid-secret')

    expect(sdk.spans().length).toBeGreaterThan(8)
    const recorded = [...spanAttributeText(sdk.spans()), ...(await sdk.allPoints()).map((p) => `${p.name} ${JSON.stringify(p.attributes)}`)].join('\n')
    for (const secret of secrets) expect(recorded).not.toContain(secret)
    expect(recorded).not.toMatch(/tv-living-room|kiosk|198\.51\.100/)
  })
})

describe('turning it off, or pointing it elsewhere', () => {
  it('telemetry: false records nothing, with an SDK registered', async () => {
    const { auth } = makeAuth({ telemetry: false, rateLimits: { perDevice: { limit: 1, windowSeconds: 60 } } })
    await runJourney(auth)
    await rejection(auth.createScene({ deviceId: 'tv' }))
    await inRequest(() => auth.createScene({ deviceId: 'tv-2' }))
    expect(sdk.spans().map((s) => s.name)).toEqual(['GET /auth/status'])
    expect(await sdk.allPoints()).toEqual([])
  })

  it('telemetry: { tracer, meter } records there and not to the global providers', async () => {
    const own = inMemoryProviders()
    const { auth } = makeAuth({ telemetry: { tracer: own.tracerProvider.getTracer('mine'), meter: own.meterProvider.getMeter('mine') } })
    await runJourney(auth)
    expect(own.spans().map((s) => s.name)).toEqual(['scanauth.create_scene', 'scanauth.scan', 'scanauth.status'])
    expect(await own.points('scanauth.scans')).toEqual([{ attributes: { result: 'authorized' }, value: 1 }])
    expect(sdk.spans()).toEqual([])
    expect(await sdk.allPoints()).toEqual([])
  })

  it('follows a meter provider registered after the instance was created', async () => {
    metrics.disable()
    const { auth } = makeAuth()
    await runJourney(auth)
    const later = inMemoryProviders()
    metrics.setGlobalMeterProvider(later.meterProvider)
    await runJourney(auth)
    expect(await later.points('scanauth.scans')).toEqual([{ attributes: { result: 'authorized' }, value: 1 }])
  })

  it('refuses a telemetry option that is neither a boolean nor { tracer, meter }', () => {
    const bad = (telemetry: unknown) => () => makeAuth({ telemetry: telemetry as ScanAuthOptions['telemetry'] })
    expect(bad('yes')).toThrow(/telemetry/)
    expect(bad({ tracer: {} })).toThrow(/telemetry must be true, false or .*a tracer with startSpan\(\)/)
    expect(bad({ exporter: {} })).toThrow(/telemetry/)
    expect(bad(true)).not.toThrow()
  })
})

/** Create, scan, poll: one of each. */
async function runJourney(auth: ScanAuth): Promise<void> {
  const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
  await auth.handleScan({ sceneStr, openid: `o-${sceneStr.slice(-6)}` })
  await auth.getStatus(sceneStr)
}
