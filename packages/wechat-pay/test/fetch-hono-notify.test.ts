// createWechatPayFetchHandler end to end on Hono over real sockets, through the testkit's
// notification suite: the emulator's signed, encrypted notification reaches a Hono app served by
// @hono/node-server. The handler reads the Request itself, so there is no parser to get wrong.
import { getRequestListener } from '@hono/node-server'
import { Hono } from 'hono'
import { describeWechatPayNotifyRoutes } from '@scanauth/testkit'
import { createWechatPayFetchHandler } from '../src/index'
import { payWorld } from './support/notify-world'

describeWechatPayNotifyRoutes(
  'Fetch handler (Hono)',
  {
    mounts: [
      {
        // The way one would write it: every method goes to the handler, which answers 405 to anything
        // but POST and 413 past its body limit by itself.
        name: 'with app.all() on its path',
        mount(host, { handlerOptions, path, onError }) {
          const notify = createWechatPayFetchHandler(handlerOptions)
          const app = new Hono()
          app.all(path, (c) => notify(c.req.raw))
          app.post('/echo', async (c) => c.json(await c.req.json()))
          app.onError((error, c) => {
            onError(error)
            return c.json({ code: 'FAIL', message: 'internal error' }, 500)
          })
          host.mount(getRequestListener(app.fetch))
        },
      },
    ],
  },
  payWorld,
)
