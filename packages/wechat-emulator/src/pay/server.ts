/**
 * The WeChat Pay emulator's HTTP server, separate from the Official Account's: the signed `/v3/…`
 * API (every request's signature checked, every answer signed), the page where a person pays, the
 * JSAPI cashier's stand-in (`jsapi-http.ts`), and the unsigned JSON endpoints behind the page and for
 * tests (`/emulator/…`).
 *
 * @module
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import { listenOn } from '../listen'
import { readBody, send, sendJson } from '../http-io'
import { WechatEmulatorError } from '../errors'
import { errorCode, payError, type PayAnswer } from './answers'
import { answerPayApi, type PayApiContext } from './api'
import type { MerchantKeys, PlatformKey, PlatformKeys } from './keys'
import { isJsapiPath, serveJsapi } from './jsapi-http'
import { payPage } from './page'
import { signatureNonce, wechatpayHeaders } from './signature'
import type { WechatPayEmulatorNotification, WechatPayEmulatorOrder, WechatPayEmulatorRefund, WechatPayEmulatorRequest, WechatPayKnobs } from './types'
import { jsonObject } from './validate'
import { checkRequestSignature } from './verify-request'

/** Everything the server serves from. */
export interface PayServerDeps {
  api: PayApiContext
  merchantKeys: MerchantKeys
  platformKeys: PlatformKeys
  toleranceSeconds: number
  payerOpenid: string
  now: () => number
  knobs(): WechatPayKnobs
  log: WechatPayEmulatorRequest[]
  orders(): WechatPayEmulatorOrder[]
  refunds(): WechatPayEmulatorRefund[]
  notifications(): WechatPayEmulatorNotification[]
  /** Pays as the phone would (the page's button); throws a WechatEmulatorError to refuse. */
  pay(input: { outTradeNo?: string; codeUrl?: string; prepayId?: string; openid?: string }): Promise<Record<string, unknown>>
  /** Applies a knob change; throws a WechatEmulatorError for a bad one. */
  setKnobs(change: unknown): WechatPayKnobs
  rotate(retireOld: boolean): Promise<string>
}

/** Starts listening and resolves with the server and its base URL. */
export function listenPay(deps: PayServerDeps, port: number, host: string): Promise<{ server: Server; url: string }> {
  return listenOn((req, res) => serve(deps, req, res), (res, message) => sendJson(res, 500, { code: 'SYSTEM_ERROR', message }), port, host)
}

async function serve(deps: PayServerDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const target = req.url ?? '/'
  const url = new URL(target, 'http://emulator.invalid')
  const method = (req.method ?? 'GET').toUpperCase()
  if (url.pathname.startsWith('/v3/')) return serveApi(deps, method, target, url, req, res)
  if (isJsapiPath(url.pathname)) return serveJsapi(deps, method, url.pathname, req, res)

  if (method === 'GET' && (url.pathname === '/' || url.pathname === '/pay')) {
    const page = payPage({ mchid: deps.api.mchid, payerOpenid: deps.payerOpenid, codeUrl: url.pathname === '/pay' ? (url.searchParams.get('code_url') ?? '') : undefined })
    return send(res, 200, 'text/html; charset=utf-8', page)
  }
  if (method === 'GET') {
    const views: Record<string, () => unknown> = {
      '/emulator/orders': deps.orders,
      '/emulator/refunds': deps.refunds,
      '/emulator/notifications': deps.notifications,
      '/emulator/knobs': deps.knobs,
      '/emulator/keys': () => deps.platformKeys.verificationKeys(),
    }
    const view = views[url.pathname]
    if (view !== undefined) return sendJson(res, 200, view())
  }
  if (method === 'POST' && url.pathname.startsWith('/emulator/')) {
    const input = jsonObject(await readBody(req))
    if (input === null) return sendJson(res, 400, { detail: 'a JSON object body is required' })
    try {
      if (url.pathname === '/emulator/pay') {
        const str = (name: string) => (typeof input[name] === 'string' && input[name] !== '' ? (input[name] as string) : undefined)
        // Without an openid, pay() takes a JSAPI order's payer, else the payerOpenid option.
        const transaction = await deps.pay({ outTradeNo: str('out_trade_no'), codeUrl: str('code_url'), prepayId: str('prepay_id'), openid: str('openid') })
        return sendJson(res, 200, transaction)
      }
      if (url.pathname === '/emulator/knobs') return sendJson(res, 200, deps.setKnobs(input))
      if (url.pathname === '/emulator/rotate-key') {
        const serial = await deps.rotate(input.retireOld === true)
        return sendJson(res, 200, { serial, verificationKeys: deps.platformKeys.verificationKeys() })
      }
    } catch (error) {
      if (error instanceof WechatEmulatorError) return sendJson(res, error.code === 'invalid_argument' ? 400 : 409, { code: error.code, detail: error.message })
      throw error
    }
  }
  return send(res, 404, 'text/plain; charset=utf-8', 'not found')
}

/** A `/v3/…` call: check the signature, answer, sign the answer with the key the request asked for. */
async function serveApi(deps: PayServerDeps, method: string, target: string, url: URL, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const now = deps.now()
  const entry: WechatPayEmulatorRequest = { at: now, method, url: target, status: 0 }
  deps.log.push(entry)
  const body = await readBody(req)

  // The request may name the platform key it wants the answer signed with (how merchants switch
  // to the public key); an id WeChat does not know makes it answer SYSTEM_ERROR.
  const asked = header(req, 'wechatpay-serial')
  const askedKey = asked === undefined ? undefined : deps.platformKeys.byId(asked)
  const key: PlatformKey = askedKey ?? deps.platformKeys.current()
  let answer: PayAnswer | null = null
  if (asked !== undefined && askedKey === undefined) {
    answer = payError(500, 'SYSTEM_ERROR', `系统繁忙，请稍后重试 (emulator: Wechatpay-Serial ${asked} is not one of its keys)`)
  }
  answer ??= checkRequestSignature({
    method,
    target,
    authorization: header(req, 'authorization'),
    body,
    mchid: deps.api.mchid,
    merchantKeys: deps.merchantKeys,
    now,
    toleranceSeconds: deps.toleranceSeconds,
  })
  answer ??= answerPayApi(deps.api, { method, url, body })

  entry.status = answer.status
  const code = errorCode(answer)
  if (code !== undefined) entry.code = code
  const text = answer.status === 204 || answer.body === undefined ? '' : JSON.stringify(answer.body)
  const bytes = Buffer.from(text, 'utf8')
  const timestamp = Math.floor(now / 1000) + deps.knobs().timestampSkewSeconds
  const headers: Record<string, string | number> = {
    ...wechatpayHeaders(bytes, key, timestamp),
    'request-id': signatureNonce().toUpperCase(),
    'cache-control': 'no-store',
  }
  if (bytes.length > 0) {
    headers['content-type'] = 'application/json; charset=utf-8'
    headers['content-length'] = bytes.length
  }
  res.writeHead(answer.status, headers)
  res.end(bytes)
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name]
  return Array.isArray(value) ? value[0] : value
}
