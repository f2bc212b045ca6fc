// signIn against a server in the opt-in modes (docs/behaviour.md B-confirm-1…12, B-secret-1…4): with
// `confirm: 'link'` a scan only moves the scene to `scanned` and the scanner's Confirm or Deny on the
// phone decides it; with `requirePollSecret` the session token goes only to a request that presents
// the scene's poll secret. Real core service and HTTP handler over loopback (support/confirm-server).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createScanAuthClient, type FetchLike, type SceneCode, type StatusUpdate, type Transport, type TransportOption } from '../src/index'
import { PLAN, startConfirmServer, type ConfirmServer } from './support/confirm-server'

const SECRET_HEADER = 'x-scanauth-poll-secret'

/** One request as the client sent it: its path, the poll secret it carried, the answer's status. */
interface Sent {
  path: string
  secret: string | null
  status: number
}

/** A fetch that records every request, and the poll secrets `create_scene` answered. */
function recordingFetch(sent: Sent[], secrets: string[], alter?: (headers: Headers) => void): FetchLike {
  return async (input, init) => {
    const headers = new Headers(init.headers)
    alter?.(headers)
    const response = await fetch(input, { ...init, headers })
    const path = new URL(input).pathname
    sent.push({ path, secret: headers.get(SECRET_HEADER), status: response.status })
    if (path.endsWith('/create_scene') && response.status === 200) {
      const body = (await response.clone().json()) as { poll_secret?: string }
      if (body.poll_secret !== undefined) secrets.push(body.poll_secret)
    }
    return response
  }
}

/** The statuses in order, each run of repeats (a poll's `pending`, `scanned`) once. */
function runs(statuses: StatusUpdate[]): string[] {
  return statuses.map((s) => s.status).filter((status, i, all) => i === 0 || all[i - 1] !== status)
}

/** What the scanner does on the confirm page of a code: press a button, or leave the link unopened. */
type Answer = 'confirm' | 'deny' | 'ignore'

/**
 * A sign-in whose codes the phone of `openid` scans once the wait has begun; once the device has
 * reported `scanned`, the scanner answers on the confirm page (`answer`, or `answer(code)` per code).
 * A failed scan or decision aborts the sign-in and is kept in `failures`.
 */
function phone(server: ConfirmServer, openid: string, answer: Answer | ((code: SceneCode) => Answer)) {
  const codes: SceneCode[] = []
  const statuses: StatusUpdate[] = []
  const failures: unknown[] = []
  const tickets = new Map<string, { code: SceneCode; ticket: Promise<string> }>()
  const answered = new Set<string>()
  const controller = new AbortController()
  const fail = (error: unknown) => {
    failures.push(error)
    controller.abort()
  }
  return {
    codes,
    statuses,
    failures,
    signal: controller.signal,
    onCode(code: SceneCode) {
      codes.push(code)
      const ticket = new Promise<void>((ok) => setTimeout(ok, 300)).then(() => server.scan(code.sceneStr, openid))
      ticket.catch(fail)
      tickets.set(code.sceneStr, { code, ticket })
    },
    onStatus(update: StatusUpdate) {
      statuses.push(update)
      const scanned = tickets.get(update.sceneStr)
      if (update.status !== 'scanned' || scanned === undefined || answered.has(update.sceneStr)) return
      answered.add(update.sceneStr)
      const decision = typeof answer === 'function' ? answer(scanned.code) : answer
      if (decision === 'ignore') return
      void scanned.ticket.then((ticket) => server.decide(ticket, openid, decision)).catch(fail)
    },
  }
}

describe('confirm on the phone, with a poll secret', () => {
  let server: ConfirmServer
  beforeAll(async () => {
    server = await startConfirmServer({ confirm: 'link', requirePollSecret: true })
  })
  afterAll(async () => {
    await server?.close()
  })

  for (const transport of ['events', 'long-poll', 'poll'] as const satisfies Transport[]) {
    it(`reports scanned, then authorized (${transport}), sending the poll secret on every request about the scene`, async () => {
      const sent: Sent[] = []
      const secrets: string[] = []
      const client = createScanAuthClient({ baseUrl: server.baseUrl, fetch: recordingFetch(sent, secrets) })
      const flow = phone(server, `o_confirm_${transport}`, 'confirm')
      const result = await client.signIn({ deviceId: `tv-${transport}`, transport, pollIntervalMs: 200, signal: flow.signal, onCode: flow.onCode, onStatus: flow.onStatus })
      expect(flow.failures).toEqual([])
      expect(result).toMatchObject({ status: 'authorized', sceneStr: flow.codes[0]?.sceneStr, sessionToken: expect.any(String) })
      // Waiting through `scanned` is not an expiry: one code.
      expect(flow.codes).toHaveLength(1)
      expect(flow.statuses.every((s) => s.transport === transport && s.sceneStr === flow.codes[0]?.sceneStr)).toBe(true)
      // The long poll answers only on a change, so it never reports the first `pending`.
      expect(runs(flow.statuses)).toEqual(transport === 'long-poll' ? ['scanned', 'authorized'] : ['pending', 'scanned', 'authorized'])
      // The secret: answered by create_scene, never handed to onCode, sent with every request of the wait.
      expect(secrets).toHaveLength(1)
      expect(secrets[0]).toMatch(/^[A-Za-z0-9_-]{43}$/)
      expect(JSON.stringify(flow.codes)).not.toContain(secrets[0])
      const waits = sent.filter((s) => !s.path.endsWith('/create_scene'))
      expect(waits.length).toBeGreaterThan(0)
      expect(waits.every((s) => s.secret === secrets[0] && s.status === 200)).toBe(true)
      expect(sent.find((s) => s.path.endsWith('/create_scene'))?.secret).toBeNull()
      // One stream for the whole wait; two long polls (the second waits at the server through `scanned`).
      if (transport === 'events') expect(waits.map((s) => s.path)).toEqual(['/auth/events'])
      if (transport === 'long-poll') expect(waits.map((s) => s.path)).toEqual(['/auth/status', '/auth/status'])
    })

    it(`resolves denied when the scanner refuses (${transport}), without a new code`, async () => {
      const sent: Sent[] = []
      const client = createScanAuthClient({ baseUrl: server.baseUrl, fetch: recordingFetch(sent, []) })
      const flow = phone(server, `o_deny_${transport}`, 'deny')
      const result = await client.signIn({ deviceId: `tv-deny-${transport}`, transport, pollIntervalMs: 200, signal: flow.signal, onCode: flow.onCode, onStatus: flow.onStatus })
      expect(flow.failures).toEqual([])
      expect(result).toEqual({ status: 'denied', sceneStr: flow.codes[0]?.sceneStr })
      expect(flow.codes).toHaveLength(1)
      expect(runs(flow.statuses).slice(-2)).toEqual(['scanned', 'denied'])
      // Nothing is asked after the final status.
      const count = sent.length
      await new Promise((ok) => setTimeout(ok, 500))
      expect(sent.length).toBe(count)
      expect(sent.map((s) => s.path).filter((p) => p.endsWith('/create_scene'))).toHaveLength(1)
    })
  }

  it('resolves denied with the default transport', async () => {
    const client = createScanAuthClient({ baseUrl: server.baseUrl })
    const flow = phone(server, 'o_deny_auto', 'deny')
    const result = await client.signIn({ deviceId: 'tv-deny-auto', signal: flow.signal, onCode: flow.onCode, onStatus: flow.onStatus })
    expect(result).toEqual({ status: 'denied', sceneStr: flow.codes[0]?.sceneStr })
  })

  it('the server refuses the session token to a request without the secret (403); the client’s own requests carry it', async () => {
    const sent: Sent[] = []
    const secrets: string[] = []
    const client = createScanAuthClient({ baseUrl: server.baseUrl, fetch: recordingFetch(sent, secrets) })
    const flow = phone(server, 'o_raw', 'confirm')
    const result = await client.signIn({ deviceId: 'tv-raw', transport: 'poll', pollIntervalMs: 200, signal: flow.signal, onCode: flow.onCode, onStatus: flow.onStatus })
    expect(result.status).toBe('authorized')
    const scene = encodeURIComponent(flow.codes[0]!.sceneStr)
    const status = (headers: Record<string, string> = {}) => fetch(`${server.baseUrl}/status?scene=${scene}`, { headers })

    const bare = await status()
    expect(bare.status).toBe(403)
    expect(await bare.json()).toMatchObject({ detail: expect.any(String) })
    expect((await status({ [SECRET_HEADER]: 'x'.repeat(43) })).status).toBe(403)
    const events = await fetch(`${server.baseUrl}/events?scene=${scene}`, { headers: { accept: 'text/event-stream' } })
    expect(events.status).toBe(403)
    await events.body?.cancel()

    const presented = await status({ [SECRET_HEADER]: secrets[0]! })
    expect(presented.status).toBe(200)
    expect(await presented.json()).toMatchObject({ status: 'authorized', session_token: result.status === 'authorized' ? result.sessionToken : '' })
  })

  it('the secret guards only the answer with the session token: a pending scene answers without it', async () => {
    const created = await fetch(`${server.baseUrl}/create_scene`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ device_id: 'raw' }) })
    const body = (await created.json()) as { scene_str: string; poll_secret: string }
    expect(body.poll_secret).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const bare = await fetch(`${server.baseUrl}/status?scene=${encodeURIComponent(body.scene_str)}`)
    expect(bare.status).toBe(200)
    expect(await bare.json()).toEqual({ status: 'pending' })
  })

  for (const transport of ['auto', 'poll'] as const satisfies TransportOption[]) {
    it(`rejects http 403 when the secret does not reach the server (a proxy that drops the header, ${transport})`, async () => {
      const sent: Sent[] = []
      const client = createScanAuthClient({ baseUrl: server.baseUrl, fetch: recordingFetch(sent, [], (headers) => headers.delete(SECRET_HEADER)) })
      const flow = phone(server, `o_stripped_${transport}`, 'confirm')
      const error = await client.signIn({ deviceId: 'tv-stripped', transport, pollIntervalMs: 200, signal: flow.signal, onCode: flow.onCode, onStatus: flow.onStatus }).catch((e: unknown) => e)
      expect(flow.failures).toEqual([])
      expect(error).toMatchObject({ name: 'ScanAuthClientError', code: 'http', status: 403, detail: expect.any(String) })
      expect(runs(flow.statuses)).toContain('scanned')
    })
  }
})

describe('confirm on the phone, without a poll secret', () => {
  let server: ConfirmServer
  beforeAll(async () => {
    server = await startConfirmServer({ confirm: 'link' })
  })
  afterAll(async () => {
    await server?.close()
  })

  it('signs in through scanned and sends no poll secret', async () => {
    const sent: Sent[] = []
    const secrets: string[] = []
    const client = createScanAuthClient({ baseUrl: server.baseUrl, fetch: recordingFetch(sent, secrets) })
    const flow = phone(server, 'o_no_secret', 'confirm')
    const result = await client.signIn({ deviceId: 'tv-plain', signal: flow.signal, onCode: flow.onCode, onStatus: flow.onStatus })
    expect(result.status).toBe('authorized')
    expect(runs(flow.statuses)).toEqual(['pending', 'scanned', 'authorized'])
    expect(secrets).toEqual([])
    expect(sent.every((s) => s.secret === null)).toBe(true)
  })
})

describe('confirm on the phone, as time passes', () => {
  let server: ConfirmServer
  beforeAll(async () => {
    server = await startConfirmServer({ confirm: 'link', requirePollSecret: true })
  })
  afterAll(async () => {
    await server?.close()
  })

  it('a scanned code left undecided expires with its confirm ticket, and is then replaced', async () => {
    const client = createScanAuthClient({ baseUrl: server.baseUrl })
    // The first code's link is never opened; the second one's is confirmed.
    const flow = phone(server, 'o_late', (code) => (code.refresh === 0 ? 'ignore' : 'confirm'))
    let scannedPolls = 0
    const result = await client.signIn({
      deviceId: 'tv-late',
      transport: 'poll',
      pollIntervalMs: 200,
      signal: flow.signal,
      onCode: flow.onCode,
      onStatus(update) {
        flow.onStatus(update)
        // The first code seen scanned twice (no new code meanwhile): the server's clock passes the ticket's 2 minutes.
        if (update.status === 'scanned' && update.sceneStr === flow.codes[0]?.sceneStr && ++scannedPolls === 2) server.clock.ahead += 3 * 60_000
      },
    })
    expect(flow.failures).toEqual([])
    expect(flow.codes.map((c) => c.refresh)).toEqual([0, 1])
    expect(result).toMatchObject({ status: 'authorized', sceneStr: flow.codes[1]?.sceneStr })
    const onFirst = flow.statuses.filter((s) => s.sceneStr === flow.codes[0]?.sceneStr)
    expect(runs(onFirst)).toEqual(['pending', 'scanned', 'expired'])
    expect(runs(flow.statuses.filter((s) => s.sceneStr === flow.codes[1]?.sceneStr)).slice(-2)).toEqual(['scanned', 'authorized'])
  })

  it('a purchase through a need_purchase scene presents the scene’s poll secret and gets its session', async () => {
    const sent: Sent[] = []
    const secrets: string[] = []
    const client = createScanAuthClient({ baseUrl: server.baseUrl, fetch: recordingFetch(sent, secrets) })
    const signIn = () => {
      const flow = phone(server, 'o_buyer', 'confirm')
      return client.signIn({ deviceId: 'tv-buyer', signal: flow.signal, onCode: flow.onCode, onStatus: flow.onStatus })
    }
    expect((await signIn()).status).toBe('authorized')
    // The free trial (1 day) runs out: the next sign-in needs a purchase.
    server.clock.ahead += 2 * 86_400_000
    const needs = await signIn()
    if (needs.status !== 'need_purchase') throw new Error(`expected need_purchase, got ${needs.status}`)
    const before = sent.length
    const paid = await client.purchase({ sceneStr: needs.sceneStr, plan: PLAN.id, pollIntervalMs: 200, onCode: (order) => void server.pay(order.orderId) })
    expect(paid).toMatchObject({ status: 'authorized', sceneStr: needs.sceneStr, sessionToken: expect.any(String) })
    // The order itself is opened only with the scene's secret (B-order-13), then every wait presents it.
    expect(sent.slice(before).filter((s) => s.path.endsWith('/purchase'))).toEqual([{ path: expect.any(String), secret: secrets[1], status: 200 }])
    const waits = sent.slice(before).filter((s) => s.path.endsWith('/events') || s.path.endsWith('/status'))
    expect(waits.length).toBeGreaterThan(0)
    expect(waits.every((s) => s.secret === secrets[1] && s.status === 200)).toBe(true)
    expect(await client.getSession(paid.sessionToken)).toMatchObject({ deviceId: 'tv-buyer', authorization: { type: 'time' } })
  })
})
