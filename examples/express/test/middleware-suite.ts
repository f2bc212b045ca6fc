/**
 * The scanauth routes as a framework's middleware serves them, the same for Express and Koa: each
 * project's `middleware.test.ts` runs it with a host app of its own, then tests what is its framework's
 * own. Real sockets, core only (MemoryStore and a QR provider in the test).
 */
import { describe, expect, it } from 'vitest'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createScanAuth, MemoryStore, type ScanAuth } from '@scanauth/core'
import { SqliteStore } from '@scanauth/sqlite'
import { createPendingScene, fetchJson, memoryAuth, pollAuthorized, postJson, testQr, useSession } from './helpers'

export interface MiddlewareHost {
  /**
   * Serves, until the test ends, an app the way people write one with the framework: its usual body
   * parser first (none when `bodyParser` is false), the scanauth routes at `/auth`, then routes of the
   * app's own: `POST /auth/login` answers `{ own: 'login', got: <the parsed body, or null> }`,
   * `GET /auth/profile` `{ own: 'profile' }` and `GET /health` the text `ok`. Resolves with the base URL.
   */
  serveHost(auth: ScanAuth, options?: { bodyParser?: boolean; onError?: (error: unknown) => void }): Promise<string>
}

export function describeMiddlewareRoutes(framework: 'express' | 'koa', { serveHost }: MiddlewareHost): void {
  describe(`the ${framework} middleware's routes`, () => {
    it('runs the whole flow: create, scan, poll, session, consume', async () => {
      const auth = memoryAuth()
      const url = await serveHost(auth)

      const created = await createPendingScene(url, 'device-1')
      expect(created).toEqual({ scene_str: expect.stringMatching(/^pc_[0-9a-f]{32}$/), qr_url: expect.any(String), expires_in: 300 })
      const scene = created.scene_str as string
      expect(created.qr_url).toBe(`https://qr.example.test/${scene}.png`)

      expect(await auth.handleScan({ sceneStr: scene, openid: 'openid-1' })).toMatchObject({ result: 'authorized' })
      const { bearer } = await pollAuthorized(url, scene)
      expect(await useSession(url, bearer, 'device-1')).toMatchObject({ user_id: 1 })
    })

    it('answers HEAD on a GET route like GET, without the body', async () => {
      const auth = memoryAuth()
      const url = await serveHost(auth)
      const { sceneStr } = await auth.createScene({ deviceId: 'd' })
      const get = await fetch(`${url}/auth/status?scene=${sceneStr}`)
      const getBody = await get.text()
      expect(JSON.parse(getBody)).toEqual({ status: 'pending' })

      const head = await fetch(`${url}/auth/status?scene=${sceneStr}`, { method: 'HEAD' })
      expect(head.status).toBe(200)
      expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'))
      expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(getBody)))
      expect(await head.text()).toBe('')
    })

    it('answers 405 without a body to HEAD on a POST-only route', async () => {
      const url = await serveHost(memoryAuth())
      const head = await fetch(`${url}/auth/create_scene`, { method: 'HEAD' })
      expect(head.status).toBe(405)
      expect(head.headers.get('allow')).toBe('POST')
      expect(await head.text()).toBe('')
    })

    it('answers 400 with {detail} for malformed input', async () => {
      const url = await serveHost(memoryAuth(), { bodyParser: false })
      const bad = await fetchJson(`${url}/auth/create_scene`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"device_id":' })
      expect(bad.status).toBe(400)
      expect(bad.body).toEqual({ detail: expect.stringMatching(/JSON/) })
      expect((await postJson(`${url}/auth/create_scene`, {})).status).toBe(400)
      expect((await postJson(`${url}/auth/create_scene`, { device_id: 'x'.repeat(129) })).status).toBe(400)
      expect((await postJson(`${url}/auth/create_scene`, { device_id: 'y'.repeat(20_000) })).body).toEqual({ detail: expect.stringMatching(/too large/) })
      const missing = await fetchJson(`${url}/auth/status`)
      expect(missing.status).toBe(400)
      expect(missing.body.detail).toEqual(expect.any(String))
    })

    it('answers 404 for an unknown scene, 405 for a wrong method, 401 without a valid session', async () => {
      const url = await serveHost(memoryAuth())
      const unknown = await fetchJson(`${url}/auth/status?scene=pc_${'0'.repeat(32)}`)
      expect(unknown.status).toBe(404)
      expect(unknown.body).toEqual({ detail: expect.any(String) })

      const wrong = await fetchJson(`${url}/auth/create_scene`)
      expect(wrong.status).toBe(405)
      expect(wrong.headers.get('allow')).toBe('POST')
      expect((await postJson(`${url}/auth/status`, {})).status).toBe(405)

      const noToken = await fetchJson(`${url}/auth/session`)
      expect(noToken.status).toBe(401)
      expect(noToken.headers.get('www-authenticate')).toBe('Bearer')
      expect((await fetchJson(`${url}/auth/session`, { headers: { authorization: 'Bearer nope' } })).status).toBe(401)
    })

    it('answers 502 when the platform cannot create the code, and stores nothing', async () => {
      const store = new MemoryStore()
      const url = await serveHost(createScanAuth({ store, qr: testQr('platform is down') }))
      const res = await postJson(`${url}/auth/create_scene`, { device_id: 'd' })
      expect(res.status).toBe(502)
      expect(res.body.detail).toMatch(/QR code creation failed.*platform is down/)
      expect(store.snapshot().scenes).toEqual([])
    })

    it('answers 500 {detail} for a store failure and reports the error to onError', async () => {
      // A real store that fails: a SqliteStore whose database has been closed.
      const dir = await mkdtemp(join(tmpdir(), 'scanauth-mw-'))
      const store = new SqliteStore({ filename: join(dir, 'db.sqlite') })
      await store.close()
      const reported: unknown[] = []
      const url = await serveHost(createScanAuth({ store, qr: testQr() }), { onError: (e) => reported.push(e) })
      const res = await postJson(`${url}/auth/create_scene`, { device_id: 'd' })
      expect(res).toMatchObject({ status: 500, body: { detail: 'Internal error' } })
      expect(reported).toHaveLength(1)
      expect(String(reported[0])).toMatch(/closed/)
      await rm(dir, { recursive: true, force: true })
    })

    it("falls through to the app's own routes, inside and outside the prefix", async () => {
      const url = await serveHost(memoryAuth())
      expect((await postJson(`${url}/auth/login`, { user: 'ann' })).body).toEqual({ own: 'login', got: { user: 'ann' } })
      expect((await fetchJson(`${url}/auth/profile`)).body).toEqual({ own: 'profile' })
      expect((await fetchJson(`${url}/health`)).body).toBe('ok')
      expect((await fetchJson(`${url}/auth/nothing-here`)).status).toBe(404)
    })
  })
}
