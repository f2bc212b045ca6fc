// wechatPayNotifyMiddleware end to end over real sockets, through the testkit's notification suite.
// What is Koa's own is how the middleware meets a body parser: before @koa/bodyparser, after it
// (ctx.request.rawBody), and the mistake, after a parser that keeps nothing. Whatever Koa emits as
// `error` goes to the suite with the middleware's onError: the middleware must never throw.
import Koa, { type Middleware } from 'koa'
import { bodyParser } from '@koa/bodyparser'
import { describeWechatPayNotifyRoutes, type NotifyHost, type NotifyMountInput } from '@scanauth/testkit'
import { createWechatPayNotificationHandler, type WechatPayNotificationHandlerOptions } from '@scanauth/wechat-pay'
import { wechatPayNotifyMiddleware } from '../src/index'
import { payWorld } from '../../wechat-pay/test/support/notify-world'

type Input = NotifyMountInput<WechatPayNotificationHandlerOptions>

/**
 * The middleware over the world's handler, telling the suite what its onError hears. No `path`: the
 * middleware's default, `/wechatpay/notify`, is the suite's, so its orders' notify_url tests the default too.
 */
const notify = ({ handlerOptions, onError }: Input) => wechatPayNotifyMiddleware(createWechatPayNotificationHandler(handlerOptions), { onError })

/** A JSON route of the app's own, after ours: the parser still serves the rest of the app. */
const echo: Middleware = async (ctx, next) => {
  if (ctx.method === 'POST' && ctx.path === '/echo') ctx.body = (ctx.request as { body?: unknown }).body ?? null
  else await next()
}

/** A parser of the app's own that keeps only the parsed object: the mistake the middleware must catch. */
const keepsNothing: Middleware = async (ctx, next) => {
  let text = ''
  for await (const chunk of ctx.req) text += String(chunk)
  ;(ctx.request as { body?: unknown }).body = text === '' ? undefined : (JSON.parse(text) as unknown)
  await next()
}

/** Serves a Koa app of `layers`, reporting what Koa emits as `error` to the suite. */
function serve(host: NotifyHost, { onError }: Input, layers: Middleware[]): void {
  const app = new Koa()
  for (const layer of layers) app.use(layer)
  app.on('error', onError)
  host.mount(app.callback())
}

describeWechatPayNotifyRoutes<WechatPayNotificationHandlerOptions>(
  'koa',
  {
    mounts: [
      { name: 'before bodyParser()', mount: (host, input) => serve(host, input, [notify(input), bodyParser(), echo]) },
      { name: 'after bodyParser() (ctx.request.rawBody)', mount: (host, input) => serve(host, input, [bodyParser(), notify(input), echo]) },
    ],
    lossy: {
      name: 'behind a parser that keeps no raw body',
      reason: /raw body/,
      mount: (host, input) => serve(host, input, [keepsNothing, notify(input)]),
    },
  },
  payWorld,
)
