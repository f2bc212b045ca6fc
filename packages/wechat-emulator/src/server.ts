/**
 * The emulator's HTTP server: WeChat's API paths, the web OAuth authorize page, the HTML page, and
 * the endpoints behind the page (`/emulator/tickets`, `/emulator/scans`, `/emulator/view`,
 * `POST /emulator/scan` by ticket or by scene, `/emulator/open`). A plain `node:http` server, so
 * clients talk to it over real sockets.
 *
 * @module
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import { listenOn } from './listen'
import { readBody, send, sendJson } from './http-io'
import { apiError, classicToken, createQrCode, oauthAccessToken, showQrCode, stableToken, type ApiAnswer, type ApiContext } from './api'
import type { ConfirmLinks } from './confirm-links'
import type { FailureQueue } from './failures'
import { AUTHORIZE_PATH, authorize, cookieValue, OPENID_COOKIE, openidCookie, type EmulatorOAuthCodes } from './oauth'
import { emulatorPage } from './page'
import { customSend, subscribeSend, templateSend, type MessagingState } from './send-api'
import { pageView, shownScans } from './page-view'
import { replyLinks } from './reply-html'
import { escapeHtml } from './html'
import { answerConfirmLink, confirmPageHtml, readConfirmLink, refusedPageHtml, SUBSCRIBE_CONFIRM_PATH } from './subscribe-page'
import type { ScanLog } from './scan-log'
import type { EmulatorTickets } from './tickets'
import type { EmulatorTokens } from './tokens'
import type { EmulatorEndpoint, EmulatorPushResult, EmulatorRequest, EmulatorScanInput } from './types'

/** Everything the server serves from. */
export interface EmulatorServerDeps {
  appId: string
  appSecret: string
  demoOpenid: string
  /** The emulator's base URL, known once it listens. */
  baseUrl: () => string
  tokens: EmulatorTokens
  tickets: EmulatorTickets
  /** The web OAuth codes the authorize page issues. */
  oauthCodes: EmulatorOAuthCodes
  failures: FailureQueue
  log: EmulatorRequest[]
  /** The scans made, for the page's list. */
  scanLog: ScanLog
  /** Which confirm links of the replies are used, for the page's list. */
  confirmLinks: ConfirmLinks
  /** The send APIs' state: users, confirmations, messages (the page's chat), quota. */
  messaging: MessagingState
  now: () => number
  /** Performs a scan (the page's clicks). */
  scan(input: EmulatorScanInput): Promise<EmulatorPushResult>
}

type Handler = (context: ApiContext) => ApiAnswer | Promise<ApiAnswer>

const API: Record<string, { endpoint: EmulatorEndpoint; handle: Handler }> = {
  '/cgi-bin/stable_token': { endpoint: 'stable_token', handle: stableToken },
  '/cgi-bin/token': { endpoint: 'token', handle: classicToken },
  '/cgi-bin/qrcode/create': { endpoint: 'qrcode/create', handle: createQrCode },
  '/cgi-bin/showqrcode': { endpoint: 'showqrcode', handle: showQrCode },
  '/sns/oauth2/access_token': { endpoint: 'sns/oauth2/access_token', handle: oauthAccessToken },
  '/cgi-bin/message/template/send': { endpoint: 'message/template/send', handle: templateSend },
  '/cgi-bin/message/template/subscribe': { endpoint: 'message/template/subscribe', handle: subscribeSend },
  '/cgi-bin/message/custom/send': { endpoint: 'message/custom/send', handle: customSend },
}

/** Starts listening and resolves with the server and its base URL. */
export function listen(deps: EmulatorServerDeps, port: number, host: string): Promise<{ server: Server; url: string }> {
  return listenOn((req, res) => serve(deps, req, res), (res, message) => send(res, 500, 'text/plain; charset=utf-8', message), port, host)
}

async function serve(deps: EmulatorServerDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://emulator.invalid')
  const method = (req.method ?? 'GET').toUpperCase()
  const route = API[url.pathname]
  if (route !== undefined) return serveApi(deps, route, method, url, req, res)

  if (method === 'GET' && url.pathname === AUTHORIZE_PATH) return serveAuthorize(deps, url, req, res)
  if ((method === 'GET' || method === 'POST') && url.pathname === SUBSCRIBE_CONFIRM_PATH) return serveSubscribeConfirm(deps, method, url, req, res)
  // Browsers ask for it on every page: an empty answer, not a 404 in the console.
  if (method === 'GET' && url.pathname === '/favicon.ico') return void res.writeHead(204, { 'cache-control': 'max-age=86400' }).end()
  const page = async (ticket: string | undefined) =>
    send(res, 200, 'text/html; charset=utf-8', emulatorPage({ appId: deps.appId, demoOpenid: deps.demoOpenid, ticket, view: await viewOf(deps, ticket) }))
  if (method === 'GET' && url.pathname === '/') return page(undefined)
  if (method === 'GET' && (url.pathname === '/scan' || url.pathname.startsWith('/q/'))) {
    const code = url.pathname === '/scan' ? deps.tickets.byTicket(url.searchParams.get('ticket') ?? '') : deps.tickets.byCode(url.pathname.slice(3))
    // An unknown code still gets the page, which says so: a phone camera lands here.
    return page(code?.ticket ?? '')
  }
  if (method === 'GET' && url.pathname === '/emulator/view') {
    return sendJson(res, 200, await viewOf(deps, url.searchParams.has('ticket') ? (url.searchParams.get('ticket') ?? '') : undefined))
  }
  if (method === 'GET' && url.pathname === '/emulator/open') return serveOpen(url, res)
  if (method === 'GET' && url.pathname === '/emulator/tickets') return sendJson(res, 200, deps.tickets.all())
  if (method === 'GET' && url.pathname === '/emulator/scans') return sendJson(res, 200, deps.scanLog.newestFirst())
  if (method === 'GET' && url.pathname === '/emulator/messages') return sendJson(res, 200, deps.messaging.log.all())
  if (method === 'POST' && url.pathname === '/emulator/scan') {
    let input: Record<string, unknown>
    try {
      input = JSON.parse((await readBody(req)).toString('utf8')) as Record<string, unknown>
    } catch {
      return sendJson(res, 400, { detail: 'a JSON body {ticket or scene_str, openid?, subscribed?} is required' })
    }
    // A code by its ticket (the page), or by its scene (a person with curl and the app's scene_str):
    // the newest live code of that scene, as scan({ sceneStr }) does.
    const ticket = typeof input?.ticket === 'string' && input.ticket !== '' ? input.ticket : undefined
    const sceneStr = typeof input?.scene_str === 'string' && input.scene_str !== '' ? input.scene_str : undefined
    const openid = typeof input?.openid === 'string' && input.openid !== '' ? input.openid : deps.demoOpenid
    if (ticket === undefined && sceneStr === undefined) return sendJson(res, 400, { detail: 'ticket or scene_str is required' })
    try {
      const subscribed = typeof input.subscribed === 'boolean' ? input.subscribed : undefined
      const result = await deps.scan(ticket !== undefined ? { ticket, openid, subscribed } : { sceneStr, openid, subscribed })
      return sendJson(res, 200, result)
    } catch (error) {
      return sendJson(res, 409, { detail: error instanceof Error ? error.message : String(error) })
    }
  }
  return send(res, 404, 'text/plain; charset=utf-8', 'not found')
}

/** The page's codes and scans; with `ticket`, only that code's. The confirm links of the scans shown are asked about first. */
async function viewOf(deps: EmulatorServerDeps, ticket: string | undefined) {
  const scans = deps.scanLog.newestFirst()
  const usedLinks = await deps.confirmLinks.usedAmong(shownScans(scans, ticket).flatMap((scan) => (scan.reply === null ? [] : replyLinks(scan.reply))))
  return pageView({ tickets: deps.tickets.all(), scans, only: ticket, openUrl: `${deps.baseUrl()}/emulator/open`, usedLinks, messages: deps.messaging.log.all() })
}

/**
 * `GET /connect/oauth2/authorize`: WeChat's web OAuth page. The phone's user is the one the
 * `wxemu_openid` cookie names (the page sets it), else the default user; the phone is sent back to
 * the app with a code, or shown why not, as WeChat shows an error page.
 */
function serveAuthorize(deps: EmulatorServerDeps, url: URL, req: IncomingMessage, res: ServerResponse): void {
  const openid = cookieValue(req.headers.cookie, OPENID_COOKIE) ?? deps.demoOpenid
  const outcome = authorize(url.searchParams, openid, deps.appId, deps.oauthCodes)
  deps.log.push({ at: deps.now(), method: 'GET', path: AUTHORIZE_PATH, status: outcome.ok ? 302 : 400 })
  if (outcome.ok) {
    res.writeHead(302, { location: outcome.location, 'content-length': 0, 'cache-control': 'no-store' }).end()
    return
  }
  send(res, 400, 'text/html; charset=utf-8', `<!doctype html><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>WeChat authorization</title><p>Authorization refused: ${escapeHtml(outcome.reason)}</p>`)
}

/**
 * `GET /mp/subscribemsg?action=get_confirm&…`: the one-time subscription's confirm page, for the
 * phone's user (the `wxemu_openid` cookie, else the default user, as on the authorize page);
 * `POST /mp/subscribemsg` with the link's parameters and `action=confirm|cancel`: its buttons, which
 * send the phone to `redirect_url` (302). A link WeChat would refuse gets a 400 page saying why.
 */
async function serveSubscribeConfirm(deps: EmulatorServerDeps, method: string, url: URL, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const openid = cookieValue(req.headers.cookie, OPENID_COOKIE) ?? deps.demoOpenid
  const params = method === 'GET' ? url.searchParams : new URLSearchParams((await readBody(req)).toString('utf8'))
  const action = params.get('action') ?? ''
  const refuse = (reason: string) => {
    deps.log.push({ at: deps.now(), method, path: SUBSCRIBE_CONFIRM_PATH, status: 400 })
    send(res, 400, 'text/html; charset=utf-8', refusedPageHtml(reason))
  }
  if (method === 'GET' && action !== 'get_confirm') return refuse('action must be get_confirm')
  if (method === 'POST' && action !== 'confirm' && action !== 'cancel') return refuse('action must be confirm or cancel')
  const read = readConfirmLink(params, { appId: deps.appId, subscribeTemplateId: deps.messaging.subscribeTemplateId })
  if (!read.ok) return refuse(read.reason)
  if (method === 'GET') {
    deps.log.push({ at: deps.now(), method, path: SUBSCRIBE_CONFIRM_PATH, status: 200 })
    return send(res, 200, 'text/html; charset=utf-8', confirmPageHtml(read.link, openid))
  }
  const location = answerConfirmLink(read.link, openid, action === 'confirm' ? 'confirm' : 'cancel', { appId: deps.appId, ...deps.messaging })
  deps.log.push({ at: deps.now(), method, path: SUBSCRIBE_CONFIRM_PATH, status: 302 })
  res.writeHead(302, { location, 'content-length': 0, 'cache-control': 'no-store' }).end()
}

/**
 * `GET /emulator/open?openid=&url=`: a tap on a link in a reply shown by the page. The scanner becomes
 * the phone's user (the cookie the authorize page reads), then the browser goes on to the link.
 */
function serveOpen(url: URL, res: ServerResponse): void {
  const openid = url.searchParams.get('openid') ?? ''
  const target = url.searchParams.get('url') ?? ''
  if (openid === '' || !/^https?:\/\//i.test(target)) return sendJson(res, 400, { detail: 'openid and an http(s) url are required' })
  res.writeHead(302, { location: target, 'set-cookie': openidCookie(openid), 'content-length': 0, 'cache-control': 'no-store' }).end()
}

async function serveApi(
  deps: EmulatorServerDeps,
  route: { endpoint: EmulatorEndpoint; handle: Handler },
  method: string,
  url: URL,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const entry: EmulatorRequest = { at: deps.now(), method, path: url.pathname, status: 0 }
  deps.log.push(entry)
  const body = method === 'POST' ? await readBody(req) : Buffer.alloc(0)
  const failure = deps.failures.take(route.endpoint)
  let answer: ApiAnswer | undefined
  if (failure !== undefined) {
    // A hang is never answered; the connection is cut when the emulator closes.
    if ('hang' in failure) return
    if ('delayMs' in failure) await new Promise((resolve) => setTimeout(resolve, failure.delayMs))
    else if ('errcode' in failure) answer = apiError(failure.errcode, failure.errmsg ?? 'emulated failure')
    else answer = { status: failure.httpStatus, contentType: 'text/html; charset=utf-8', body: failure.body ?? '' }
  }
  answer ??= await route.handle({
    method,
    query: url.searchParams,
    body: body.toString('utf8'),
    appId: deps.appId,
    appSecret: deps.appSecret,
    tokens: deps.tokens,
    tickets: deps.tickets,
    oauthCodes: deps.oauthCodes,
    messaging: deps.messaging,
  })
  entry.status = answer.status
  if (answer.errcode !== undefined) entry.errcode = answer.errcode
  send(res, answer.status, answer.contentType, answer.body)
}
