/**
 * `openInWechat`: the emulated phone taps a link. Tests have no browser, yet the confirm flow needs
 * one: the app's link redirects to WeChat's authorize page, which knows who the user is and sends the
 * phone back with a code. This follows the app's redirects over HTTP and plays the authorize page
 * in-process for the given user, so a test gets the address with the code and fetches the app's page.
 *
 * @module
 */
import { WechatEmulatorError } from './errors'
import { AUTHORIZE_PATH, authorize, type EmulatorOAuthCodes } from './oauth'
import type { EmulatorRequest } from './types'

/** Redirects followed before giving up, as browsers do (theirs is about 20). */
const MAX_HOPS = 10

/** WeChat's in-app browser says `MicroMessenger`; apps that check it see a phone in WeChat. */
export const WECHAT_BROWSER_USER_AGENT =
  'Mozilla/5.0 (Linux; Android 14; Emulator) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 MicroMessenger/8.0.50 (scanauth WeChat emulator)'

/** What `openInWechat` needs of the running emulator. */
export interface OpenInWechatDeps {
  /** The emulator's base URL: its own authorize page is played in-process. */
  baseUrl: string
  appId: string
  demoOpenid: string
  oauthCodes: EmulatorOAuthCodes
  log: EmulatorRequest[]
  now: () => number
  /** Aborted when the emulator closes. */
  closed: AbortSignal
}

/** Opens `url` as `openid` and resolves with where the phone lands after the authorize page (see `WechatEmulator.openInWechat`). */
export async function openInWechat(deps: OpenInWechatDeps, url: string, options?: { openid?: string }): Promise<string> {
  const openid = options?.openid ?? deps.demoOpenid
  if (typeof openid !== 'string' || openid === '') throw new WechatEmulatorError('invalid_argument', 'openInWechat: openid must be a non-empty string')
  let current = httpUrl(url)
  const own = new URL(deps.baseUrl)
  for (let hop = 0; hop <= MAX_HOPS; hop++) {
    if (current.origin === own.origin && current.pathname === AUTHORIZE_PATH) {
      const outcome = authorize(current.searchParams, openid, deps.appId, deps.oauthCodes)
      deps.log.push({ at: deps.now(), method: 'GET', path: AUTHORIZE_PATH, status: outcome.ok ? 302 : 400 })
      if (!outcome.ok) throw new WechatEmulatorError('oauth_refused', `openInWechat: the authorize page refuses: ${outcome.reason}`)
      return outcome.location
    }
    if (current.hostname === 'open.weixin.qq.com') {
      throw new WechatEmulatorError(
        'oauth_refused',
        "openInWechat: the link leads to the real WeChat authorize page; give the app's createWechatWebOAuth the emulator's webOAuthOptions()",
      )
    }
    if (deps.closed.aborted) throw new WechatEmulatorError('closed', 'the emulator is closed')
    let response: Response
    try {
      response = await fetch(current, { redirect: 'manual', headers: { 'user-agent': WECHAT_BROWSER_USER_AGENT }, signal: deps.closed })
    } catch (error) {
      if (deps.closed.aborted) throw new WechatEmulatorError('closed', 'the emulator is closed', { cause: error })
      throw error
    }
    // Only the address matters; the body of a redirect (or of the page that ends the chain) is not read.
    await response.body?.cancel()
    const location = response.headers.get('location')
    if (response.status < 300 || response.status > 399 || location === null) return current.href
    current = new URL(location, current)
  }
  throw new WechatEmulatorError('oauth_refused', `openInWechat: more than ${MAX_HOPS} redirects`)
}

function httpUrl(url: string): URL {
  let parsed: URL | undefined
  try {
    parsed = new URL(url)
  } catch {
    parsed = undefined
  }
  if (parsed === undefined || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    throw new WechatEmulatorError('invalid_argument', 'openInWechat: url must be an absolute http(s) URL')
  }
  return parsed
}
