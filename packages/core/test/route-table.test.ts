// The route table (src/http/routes.ts) is what the handler serves: every declared route is answered
// at its path and method under any base path, with a status its declaration names; the confirm page
// only with confirm: 'link', the document only with openapi: true (else their paths fall through);
// a method a path does not declare is 405 with the declared methods in Allow; and a route declared
// `bearer` refuses a request without a token, while one declared `none` never asks for one.
import { describe, expect, it } from 'vitest'
import { createHttpHandler, createScanAuth, ERROR_STATUS, MemoryStore, openApiDocument, type HttpRequest } from '@scanauth/core'
import { RecordingQrProvider, TestNotifier, TestPaymentService, TestWebOAuth } from '@scanauth/testkit'
import type { Route } from '../src/http/route'
import { ROUTES } from '../src/http/routes'

const plain = createScanAuth({ store: new MemoryStore(), qr: new RecordingQrProvider() })
const link = createScanAuth({
  store: new MemoryStore(),
  qr: new RecordingQrProvider(),
  confirm: 'link',
  confirmation: { url: 'https://app.example.test/auth/confirm', oauth: new TestWebOAuth() },
  payments: {
    provider: new TestPaymentService(Date.now),
    plans: [{ id: 'month', description: '30 days', amountFen: 1990, grant: { type: 'time', days: 30 } }],
    phone: { url: 'https://app.example.test/auth/m/', oauth: new TestWebOAuth() },
  },
  reminders: { leadDays: [3, 1], notifier: new TestNotifier({ templateId: 'tpl', scene: 1 }) },
})

/** A request to a route with nothing in it: no query, no token, an empty JSON object for a POST. */
const bare = (method: string, path: string): HttpRequest => ({ method, path, headers: { 'content-type': 'application/json' }, body: method === 'POST' ? '{}' : undefined })

/** The statuses a route's declaration names: its answers, the status of each error code, and 500. */
function declaredStatuses(route: Route): Set<number> {
  const errors = route.errors ?? []
  return new Set([...Object.keys(route.answers).map(Number), ...errors.map((code) => ERROR_STATUS[code]), ...(route.errors === undefined ? [] : [500])])
}

/** Each declared path and its methods, in the table's order. */
function methodsByPath(): Map<string, string[]> {
  const paths = new Map<string, string[]>()
  for (const route of ROUTES) paths.set(route.path, [...(paths.get(route.path) ?? []), route.method])
  return paths
}

describe('the route table and the handler', () => {
  it('declares each method of a path once, each operationId once, one route for the document, and only the document’s tags', () => {
    const keys = ROUTES.map((route) => `${route.method} ${route.path}`)
    expect(new Set(keys).size).toBe(keys.length)
    expect(new Set(ROUTES.map((route) => route.operationId)).size).toBe(ROUTES.length)
    expect(ROUTES.filter((route) => route.document === true)).toHaveLength(1)
    const tags = (openApiDocument().tags as Array<{ name: string }>).map((tag) => tag.name)
    for (const route of ROUTES) expect(tags, route.operationId).toEqual(expect.arrayContaining([...route.tags]))
  })

  it('answers every declared route at its path and method, under any base path, with a status it declares', async () => {
    for (const basePath of ['/auth', '', '/api/v1/auth']) {
      const handle = createHttpHandler(link, { basePath })
      for (const route of ROUTES) {
        const path = `${basePath}${route.path}`
        const answer = await handle(bare(route.method, path))
        expect(answer, `${route.method} ${path}`).toBeDefined()
        expect(handle.owns(path), path).toBe(true)
        expect([...declaredStatuses(route)], `${route.method} ${path}`).toContain(answer?.status)
      }
    }
  })

  it('serves the confirm page only with confirm: link, the phone pages only with payments.phone, the subscription redirect only with reminders that offer one, and the document only with openapi: true; other paths fall through', async () => {
    const withoutConfirm = createHttpHandler(plain)
    const withoutDocument = createHttpHandler(link, { openapi: false })
    for (const route of ROUTES) {
      const path = `/auth${route.path}`
      expect(await withoutConfirm(bare(route.method, path)) === undefined, `${route.method} ${path} without confirm and phone`).toBe(route.mode !== undefined)
      expect(withoutConfirm.owns(path), path).toBe(route.mode === undefined)
      expect(await withoutDocument(bare(route.method, path)) === undefined, `${route.method} ${path} without the document`).toBe(route.document === true)
      expect(withoutDocument.owns(path), path).toBe(route.document !== true)
    }
    const handle = createHttpHandler(link)
    for (const path of ['/auth', '/auth/', '/auth/nope', '/auth/status/', '/status', '/AUTH/status', '/auth//status', '/auth/status;x']) {
      expect(await handle(bare('GET', path)), path).toBeUndefined()
      expect(handle.owns(path), path).toBe(false)
    }
  })

  it('answers 405 to a method a path does not declare, with the declared methods in Allow', async () => {
    const handle = createHttpHandler(link)
    for (const [path, methods] of methodsByPath()) {
      for (const method of ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'].filter((m) => !methods.includes(m))) {
        const answer = await handle(bare(method, `/auth${path}`))
        expect(answer, `${method} ${path}`).toMatchObject({ status: 405, headers: { allow: methods.join(', ') } })
      }
    }
  })

  it('refuses a request without a token on a route declared bearer (401, WWW-Authenticate), never on one declared none', async () => {
    const handle = createHttpHandler(link)
    for (const route of ROUTES) {
      const answer = await handle(bare(route.method, `/auth${route.path}`))
      if (route.auth === 'bearer') expect(answer, `${route.method} ${route.path}`).toMatchObject({ status: 401, headers: { 'www-authenticate': 'Bearer' } })
      if (route.auth === 'none') expect(answer?.status, `${route.method} ${route.path}`).not.toBe(401)
    }
  })
})
