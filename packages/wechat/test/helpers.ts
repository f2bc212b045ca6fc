// Test helpers: a real node:http server that mounts a WeChat callback (reading the raw body, as an app
// must), and a manual clock.
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { WechatCallback } from '../src/index'

/** The official safe-mode vector of the reference (§4). */
export const VECTOR = {
  token: 'spamtest',
  encodingAESKey: 'abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG',
  appId: 'wx2c2769f8efd9abc2',
  timestamp: '1409735669',
  nonce: '1320562132',
  msgSignature: '5d197aaffba7e9b25a30732f161a50dee96bd5fa',
  signature: '16120ec1b8dbb870f510d87ce6bc2463eae6ca1a',
  encrypt:
    'hyzAe4OzmOMbd6TvGdIOO6uBmdJoD0Fk53REIHvxYtJlE2B655HuD0m8KUePWB3+LrPXo87wzQ1QLvbeUgmBM4x6F8PGHQHFVAFmOD2LdJF9FrXpbUAh0B5GIItb52sn896wVsMSHGuPE328HnRGBcrS7C41IzDWyWNlZkyyXwon8T332jisa+h6tEDYsVticbSnyU8dKOIbgU6ux5VTjg3yt+WGzjlpKn6NPhRjpA912xMezR4kw6KWwMrCVKSVCZciVGCgavjIQ6X8tCOp3yZbGpy0VxpAe+77TszTfRd5RJSVO/HTnifJpXgCSUdUue1v6h0EIBYYI1BD1DlD+C0CR8e6OewpusjZ4uBl9FyJvnhvQl+q5rv1ixrcpCumEPo5MJSgM9ehVsNPfUM669WuMyVWQLCzpu9GhglF2PE=',
  message:
    '<xml><ToUserName><![CDATA[gh_10f6c3c3ac5a]]></ToUserName>\n<FromUserName><![CDATA[oyORnuP8q7ou2gfYjqLzSIWZf0rs]]></FromUserName>\n<CreateTime>1409735668</CreateTime>\n<MsgType><![CDATA[text]]></MsgType>\n<Content><![CDATA[abcdteT]]></Content>\n<MsgId>6054768590064713728</MsgId>\n</xml>',
}

/** A clock tests move by hand (epoch milliseconds). */
export function manualClock(start = Date.parse('2026-03-01T08:00:00Z')) {
  let t = start
  return {
    now: () => t,
    advance(ms: number) {
      t += ms
    },
    set(ms: number) {
      t = ms
    },
  }
}

/** Reads the whole raw body, as an app must before handing it to the callback. */
async function rawBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk)
  return Buffer.concat(chunks)
}

/** Serves `callback` at `/wechat/callback` on 127.0.0.1 and a free port. */
export async function serveCallback(callback: WechatCallback): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost')
    if (url.pathname !== '/wechat/callback') return void res.writeHead(404).end()
    const response = await callback({ method: req.method ?? 'GET', query: url.searchParams, body: await rawBody(req) })
    res.writeHead(response.status, response.headers).end(response.body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/wechat/callback`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}

/** Resources a test opened, closed in reverse order by `closeAll` (call it in afterEach). */
export function closer() {
  const steps: Array<() => Promise<unknown> | unknown> = []
  return {
    add<T extends { close(): Promise<unknown> | unknown }>(resource: T): T {
      steps.push(() => resource.close())
      return resource
    },
    async closeAll() {
      for (const step of steps.splice(0).reverse()) await step()
    },
  }
}
