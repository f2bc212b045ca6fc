// wechatPayNotifyMiddleware end to end over real sockets, through the testkit's notification suite.
// What is Express's own is how the route meets the app's body parsers: before express.json(), behind
// express.json({ verify: keepRawBody }), behind express.raw() on its route, and the mistake, behind a
// plain express.json(). The orders are kept in a SqliteStore file, so the grant is a real commit.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import express, { type Express } from 'express'
import { SqliteStore } from '@scanauth/sqlite'
import { describeWechatPayNotifyRoutes, type NotifyHost, type NotifyMountInput } from '@scanauth/testkit'
import { createWechatPayNotificationHandler, type WechatPayNotificationHandlerOptions } from '@scanauth/wechat-pay'
import { afterEach } from 'vitest'
import { keepRawBody, wechatPayNotifyMiddleware } from '../src/index'
import { payWorld } from '../../wechat-pay/test/support/notify-world'

type Input = NotifyMountInput<WechatPayNotificationHandlerOptions>

/** The middleware over the world's handler, telling the suite what its onError hears. */
const notify = ({ handlerOptions, onError }: Input) => wechatPayNotifyMiddleware(createWechatPayNotificationHandler(handlerOptions), { onError })

/** Serves the app `build` sets up, with a JSON route of its own after it: the parser still serves the rest of the app. */
function serve(host: NotifyHost, build: (app: Express) => void): void {
  const app = express()
  build(app)
  app.post('/echo', (req, res) => void res.json(req.body))
  host.mount(app)
}

const stores: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const close of stores.splice(0)) await close()
})

/** A SqliteStore in a temporary file, closed and deleted after the test. */
async function sqliteStore(): Promise<SqliteStore> {
  const dir = await mkdtemp(join(tmpdir(), 'scanauth-notify-'))
  const store = new SqliteStore({ filename: join(dir, 'db.sqlite') })
  stores.push(async () => {
    await store.close()
    await rm(dir, { recursive: true, force: true })
  })
  return store
}

describeWechatPayNotifyRoutes<WechatPayNotificationHandlerOptions>(
  'express',
  {
    mounts: [
      {
        // The documented mount.
        name: 'before app.use(express.json())',
        mount: (host, input) =>
          serve(host, (app) => {
            app.use(input.path, notify(input))
            app.use(express.json())
          }),
      },
      {
        name: 'after express.json({ verify: keepRawBody })',
        mount: (host, input) =>
          serve(host, (app) => {
            app.use(express.json({ verify: keepRawBody }))
            app.use(input.path, notify(input))
          }),
      },
      {
        // The usual Express webhook idiom: its Buffer in `req.body` is the exact bytes.
        name: 'behind express.raw() on its route',
        routesOnlyPost: true,
        mount: (host, input) =>
          serve(host, (app) => {
            app.post(input.path, express.raw({ type: '*/*' }), notify(input))
            app.use(express.json())
          }),
      },
    ],
    lossy: {
      name: 'after plain express.json()',
      reason: /keepRawBody/,
      mount: (host, input) =>
        serve(host, (app) => {
          app.use(express.json())
          app.use(input.path, notify(input))
        }),
    },
  },
  async (options) => payWorld({ ...options, store: await sqliteStore() }),
)
