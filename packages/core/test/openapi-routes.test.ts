// The route suites every adapter runs (@scanauth/testkit: the flow, waiting, purchases, the confirm
// page, the phone payment pages), here with every answer of the Fetch handler checked against the
// OpenAPI document on its way out: its status is documented for the path and method, the headers
// the document requires are there, its content type is listed, and a JSON body validates (Ajv)
// against the documented schema.
// A test whose answers do not conform fails in afterEach; the last test checks that the suites
// produced the main answers at all.
import { Hono } from 'hono'
import { afterEach, describe, expect, it } from 'vitest'
import { createFetchHandler, type Store } from '@scanauth/core'
import { describeHttpRoutes } from '@scanauth/testkit'
import { ROUTES } from '../src/http/routes'
import { connectionAddresses, honoServerPerTest } from './fetch-hono'
import { conformance } from './openapi-conformance'

const serveApp = honoServerPerTest()
const { check } = conformance()

/** What did not conform during the current test. */
let problems: string[] = []
/** `METHOD path status` of every answer checked, over the whole file. */
const seen = new Set<string>()

afterEach(() => {
  const found = problems
  problems = []
  expect(found, 'answers that do not conform to docs/openapi.json').toEqual([])
})

/** A store whose backend is gone: every call rejects, as a closed database does. */
async function failingStore(): Promise<Store> {
  const gone = () => Promise.reject(new Error('the database connection is closed'))
  return { load: gone, commit: gone, listLedger: gone, endSessions: gone, incrementCounter: gone, deleteCounter: gone, watchScenes: () => () => undefined }
}

/** Checks one answer of the handler (the body of a JSON answer is read from a clone). */
async function checked(request: Request, answer: Response): Promise<Response> {
  const path = new URL(request.url).pathname.replace(/^\/auth/, '')
  const headers = Object.fromEntries(answer.headers)
  const json = headers['content-type']?.startsWith('application/json') === true && request.method !== 'HEAD'
  const text = json ? await answer.clone().text() : ''
  problems.push(...check(request.method, path, { status: answer.status, headers, body: text === '' ? undefined : JSON.parse(text) }))
  seen.add(`${request.method} ${path} ${answer.status}`)
  return answer
}

describeHttpRoutes(
  'fetch, every answer checked against the OpenAPI document',
  (auth, { onError, heartbeatMs }) => {
    const { clientAddress, remember } = connectionAddresses()
    const handler = createFetchHandler(auth, { onError, heartbeatMs, clientAddress })
    const app = new Hono()
    app.all('/auth/*', async (c, next) => (handler.owns(c.req.path) ? checked(c.req.raw, await handler(remember(c))) : next()))
    app.post('/auth/login', async (c) => c.json({ own: 'login', got: await c.req.json().catch(() => null) }))
    app.get('/auth/profile', (c) => c.json({ own: 'profile' }))
    app.get('/health', (c) => c.text('ok'))
    return serveApp(app)
  },
  { failingStore },
)

describe('the answers checked', () => {
  it('include every successful answer of every route, and the errors', () => {
    // Every answer the route table declares (the document's aside: it has tests of its own).
    for (const route of ROUTES) {
      if (route.document === true) continue
      for (const status of Object.keys(route.answers)) expect(seen, `${route.method} ${route.path} ${status}`).toContain(`${route.method} ${route.path} ${status}`)
    }
    for (const answer of [
      'POST /create_scene 400',
      'POST /create_scene 500',
      'POST /create_scene 502',
      'GET /status 400',
      'GET /status 403',
      'GET /status 404',
      'GET /session 401',
      'POST /purchase 403',
      'POST /purchase 404',
      'POST /purchase 409',
      'POST /purchase 429',
      'POST /purchase 502',
      'GET /create_scene 405',
      // The phone pages (payments.phone): their refusals are pages too, each with its status.
      'GET /m/pay 400',
      'GET /m/pay 403',
      'GET /m/pay 404',
      'GET /m/pay 410',
      'POST /m/pay 403',
      'POST /m/pay 404',
      'GET /m/order 403',
      'GET /m/order 404',
      'GET /m/order 409',
      // The reminder subscription's redirect (reminders): its refusals are pages too.
      'GET /m/subscribed 400',
      'GET /m/subscribed 403',
    ]) {
      expect(seen, answer).toContain(answer)
    }
  })
})
