// The route suite every framework adapter runs (@scanauth/testkit), here for createFetchHandler in a
// Hono app served by @hono/node-server. The app sends a request to scanauth only when the path is one
// of its routes (`owns`), so its own routes under /auth keep working.
import { Hono } from 'hono'
import { createFetchHandler, type Store } from '@scanauth/core'
import { describeHttpRoutes } from '@scanauth/testkit'
import { connectionAddresses, honoServerPerTest } from './fetch-hono'

const serveApp = honoServerPerTest()

/** A store whose backend is gone: every call rejects, as a closed database does. */
async function failingStore(): Promise<Store> {
  const gone = () => Promise.reject(new Error('the database connection is closed'))
  return { load: gone, commit: gone, listLedger: gone, endSessions: gone, incrementCounter: gone, deleteCounter: gone, watchScenes: () => () => undefined }
}

describeHttpRoutes(
  'fetch (Hono)',
  (auth, { onError, heartbeatMs }) => {
    const { clientAddress, remember } = connectionAddresses()
    const handler = createFetchHandler(auth, { onError, heartbeatMs, clientAddress })
    const app = new Hono()
    app.all('/auth/*', (c, next) => (handler.owns(c.req.path) ? handler(remember(c)) : next()))
    app.post('/auth/login', async (c) => c.json({ own: 'login', got: await c.req.json().catch(() => null) }))
    app.get('/auth/profile', (c) => c.json({ own: 'profile' }))
    app.get('/health', (c) => c.text('ok'))
    return serveApp(app)
  },
  { failingStore },
)
