/**
 * The three apps the fuzz test attacks, each on 127.0.0.1 with a free port, MemoryStore and the
 * WeChat emulators: the Express and Koa examples as they ship (`startServer`), and a Hono app that
 * mounts `createFetchHandler`, `createWechatFetchHandler` and WeChat Pay's `asFetchHandler` over the
 * same wiring.
 */
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import { createFetchHandler } from '@scanauth/core'
import { createWechatFetchHandler } from '@scanauth/wechat'
import { asFetchHandler } from '@scanauth/wechat-pay'
import { createWiring, type ExampleConfig } from '@scanauth/example-shared'
import { startServer as startExpress } from '../../examples/express/src/app'
import { startServer as startKoa } from '../../examples/koa/src/app'

/** A started app: where it listens, what it logged, and how to stop it. */
export interface FuzzTarget {
  url: string
  /** Every line the app logged. */
  lines: string[]
  close(): Promise<void>
}

/** The configuration every target runs with; `log` collects into `lines`. */
function config(lines: string[]): ExampleConfig {
  // Confirm on the phone and poll secrets on: the confirm page is among the routes attacked.
  return { port: 0, host: '127.0.0.1', store: { kind: 'memory' }, wechat: { kind: 'emulator' }, confirm: 'link', requirePollSecret: true, log: (line) => lines.push(line) }
}

async function example(start: typeof startExpress): Promise<FuzzTarget> {
  const lines: string[] = []
  const running = await start(config(lines))
  return { url: running.url, lines, close: () => running.close() }
}

/** A Hono app with scanauth's Fetch handlers at `/auth/*`, `/wechat/callback` and `/wechatpay/notify`. */
async function hono(): Promise<FuzzTarget> {
  const lines: string[] = []
  const wiring = await createWiring(config(lines), 'hono')
  const handler = createFetchHandler(wiring.auth, { onError: wiring.logError, clientAddress: () => '127.0.0.1' })
  const wechat = createWechatFetchHandler(wiring.wechatCallback)
  const pay = asFetchHandler(wiring.wechatPayNotify)
  const app = new Hono()
  app.all('/auth/*', (c) => handler(c.req.raw))
  app.all('/wechat/callback', (c) => wechat(c.req.raw))
  app.all('/wechatpay/notify', (c) => pay(c.req.raw))
  const { server, port } = await new Promise<{ server: Server; port: number }>((resolve) => {
    const started = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => resolve({ server: started as Server, port: info.port }))
  })
  const url = `http://127.0.0.1:${port}`
  await wiring.listening(url)
  return {
    url,
    lines,
    close: async () => {
      server.closeAllConnections()
      await new Promise((done) => server.close(done))
      await wiring.close()
    },
  }
}

/** The targets by name. */
export const FUZZ_TARGETS = {
  express: () => example(startExpress),
  koa: () => example(startKoa),
  hono,
} as const satisfies Record<string, () => Promise<FuzzTarget>>
