/**
 * `confirmSubscription`: the emulated phone opens a "remind me" link and taps Confirm (or Cancel) on
 * WeChat's subscribemsg page, without a browser. The app's link may first ask web OAuth who the phone
 * is and then redirect to the confirm page, so the redirects are followed over HTTP, the authorize
 * page is answered in-process for the user (as `openInWechat` does), and the confirm page too; the
 * result is where WeChat sends the phone, the app's `redirect_url` with the answer, for the test to
 * fetch.
 *
 * @module
 */
import { WechatEmulatorError } from './errors'
import { AUTHORIZE_PATH, authorize, type EmulatorOAuthCodes } from './oauth'
import { WECHAT_BROWSER_USER_AGENT } from './open-in-wechat'
import { answerConfirmLink, readConfirmLink, SUBSCRIBE_CONFIRM_PATH, type ConfirmPageDeps } from './subscribe-page'
import type { EmulatorRequest } from './types'

/** Redirects followed before giving up, as `openInWechat`. */
const MAX_HOPS = 10

/** What `confirmSubscription` needs of the running emulator. */
export interface SubscribeInWechatDeps extends ConfirmPageDeps {
  /** The emulator's base URL: its own pages are played in-process. */
  baseUrl: string
  demoOpenid: string
  oauthCodes: EmulatorOAuthCodes
  log: EmulatorRequest[]
  /** Aborted when the emulator closes. */
  closed: AbortSignal
}

/** Opens `url` as `openid`, answers the confirm page with `action`, and resolves with where the phone goes next. */
export async function confirmSubscription(
  deps: SubscribeInWechatDeps,
  url: string,
  options?: { openid?: string; action?: 'confirm' | 'cancel' },
): Promise<string> {
  const openid = options?.openid ?? deps.demoOpenid
  if (typeof openid !== 'string' || openid === '') throw new WechatEmulatorError('invalid_argument', 'confirmSubscription: openid must be a non-empty string')
  const action = options?.action ?? 'confirm'
  if (action !== 'confirm' && action !== 'cancel') throw new WechatEmulatorError('invalid_argument', "confirmSubscription: action must be 'confirm' or 'cancel'")
  let current = httpUrl(url)
  const own = new URL(deps.baseUrl).origin
  for (let hop = 0; hop <= MAX_HOPS; hop++) {
    if (current.origin === own && current.pathname === SUBSCRIBE_CONFIRM_PATH) return answer(deps, current, openid, action)
    if (current.origin === own && current.pathname === AUTHORIZE_PATH) {
      // The app asks who the phone is on the way (web OAuth): answered as the phone's user.
      const outcome = authorize(current.searchParams, openid, deps.appId, deps.oauthCodes)
      deps.log.push({ at: deps.now(), method: 'GET', path: AUTHORIZE_PATH, status: outcome.ok ? 302 : 400 })
      if (!outcome.ok) throw new WechatEmulatorError('oauth_refused', `confirmSubscription: the authorize page refuses: ${outcome.reason}`)
      current = new URL(outcome.location)
      continue
    }
    if (current.hostname === 'mp.weixin.qq.com') {
      throw new WechatEmulatorError(
        'subscribe_refused',
        "confirmSubscription: the link leads to the real WeChat confirm page; give createWechatReminderNotifier the emulator's reminderNotifierOptions()",
      )
    }
    const next = await redirectOf(deps, current)
    if (next === null) throw new WechatEmulatorError('subscribe_refused', `confirmSubscription: ${current.origin}${current.pathname} answered without leading to the confirm page`)
    current = next
  }
  throw new WechatEmulatorError('subscribe_refused', `confirmSubscription: more than ${MAX_HOPS} redirects`)
}

/** The confirm page, answered: the link checked as the page checks it, the answer recorded. */
function answer(deps: SubscribeInWechatDeps, link: URL, openid: string, action: 'confirm' | 'cancel'): string {
  const refuse = (reason: string): never => {
    deps.log.push({ at: deps.now(), method: 'GET', path: SUBSCRIBE_CONFIRM_PATH, status: 400 })
    throw new WechatEmulatorError('subscribe_refused', `confirmSubscription: the confirm page refuses: ${reason}`)
  }
  if (link.searchParams.get('action') !== 'get_confirm') refuse('action must be get_confirm')
  const read = readConfirmLink(link.searchParams, deps)
  if (!read.ok) return refuse(read.reason)
  deps.log.push({ at: deps.now(), method: 'POST', path: SUBSCRIBE_CONFIRM_PATH, status: 302 })
  return answerConfirmLink(read.link, openid, action, deps)
}

/** Where `url` redirects to, or null when it answers with a page. */
async function redirectOf(deps: SubscribeInWechatDeps, url: URL): Promise<URL | null> {
  if (deps.closed.aborted) throw new WechatEmulatorError('closed', 'the emulator is closed')
  let response: Response
  try {
    response = await fetch(url, { redirect: 'manual', headers: { 'user-agent': WECHAT_BROWSER_USER_AGENT }, signal: deps.closed })
  } catch (error) {
    if (deps.closed.aborted) throw new WechatEmulatorError('closed', 'the emulator is closed', { cause: error })
    throw error
  }
  await response.body?.cancel()
  const location = response.headers.get('location')
  if (response.status < 300 || response.status > 399 || location === null) return null
  return new URL(location, url)
}

function httpUrl(url: string): URL {
  let parsed: URL | undefined
  try {
    parsed = new URL(url)
  } catch {
    parsed = undefined
  }
  if (parsed === undefined || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    throw new WechatEmulatorError('invalid_argument', 'confirmSubscription: url must be an absolute http(s) URL')
  }
  return parsed
}
