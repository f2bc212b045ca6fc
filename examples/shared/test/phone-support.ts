/**
 * The phone that scanned, played over HTTP for the example suites (no browser): WeChat's in-app
 * browser (a `MicroMessenger` user agent) opening the "Buy on this phone" link, WeChat web OAuth at
 * the Official Account emulator (whose authorize page knows the phone's user from its `wxemu_openid`
 * cookie), the plans page's form, and WeChat's cashier played by the WeChat Pay emulator's JSAPI
 * cashier endpoint, paying as that person. The browser test (examples/express/test/browser-phone-pay.test.ts)
 * does the same in Chromium.
 */

/** The user agent of WeChat's in-app browser, as the phone pages look for it. */
export const WECHAT_USER_AGENT = 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 MicroMessenger/8.0.50'

/** The path of WeChat's (and the emulator's) web OAuth authorize page. */
const AUTHORIZE_PATH = '/connect/oauth2/authorize'

/** A page the phone landed on. */
export interface PhonePage {
  /** Where it landed (the server's address, after any proxy rewrite). */
  url: string
  status: number
  headers: Headers
  text: string
}

/** Who the phone is, and where it reaches things. */
export interface Phone {
  /** The person: the openid the Official Account emulator's authorize page answers for. */
  openid: string
  /** The Official Account emulator's base URL: its authorize page plays WeChat's (also for `open.weixin.qq.com`). */
  wechatUrl: string
  /** The example server's address. */
  serverUrl: string
  /** `SCANAUTH_PUBLIC_URL`, when the server's links name it: the phone reaches it at `serverUrl` (a proxy). */
  publicUrl?: string
}

/** `url` as the phone reaches it: the public address goes to the server, WeChat's authorize page to the emulator's. */
function reachable(phone: Phone, url: URL): { target: URL; cookie?: string } {
  if (url.pathname === AUTHORIZE_PATH && (url.hostname === 'open.weixin.qq.com' || url.href.startsWith(phone.wechatUrl))) {
    return { target: new URL(`${phone.wechatUrl}${AUTHORIZE_PATH}${url.search}`), cookie: `wxemu_openid=${encodeURIComponent(phone.openid)}` }
  }
  if (phone.publicUrl !== undefined && url.href.startsWith(phone.publicUrl)) return { target: new URL(phone.serverUrl + url.href.slice(phone.publicUrl.length)) }
  return { target: url }
}

/** Opens `url` in WeChat's browser as `phone.openid`, following redirects (through OAuth) to the page. */
export async function phoneGet(phone: Phone, url: string): Promise<PhonePage> {
  let current = new URL(url)
  for (let hop = 0; hop < 10; hop++) {
    const { target, cookie } = reachable(phone, current)
    const response = await fetch(target, { redirect: 'manual', headers: { 'user-agent': WECHAT_USER_AGENT, ...(cookie === undefined ? {} : { cookie }) } })
    const location = response.headers.get('location')
    if (response.status >= 300 && response.status < 400 && location !== null) {
      await response.arrayBuffer()
      current = new URL(location, target)
      continue
    }
    return { url: target.href, status: response.status, headers: response.headers, text: await response.text() }
  }
  throw new Error(`more than 10 redirects from ${url}`)
}

/** Posts a phone page's form (`fields`, URL-encoded) to `action`, relative to the page it is on. */
export async function phonePost(phone: Phone, page: PhonePage, action: string, fields: Record<string, string>): Promise<PhonePage> {
  const target = new URL(action, page.url)
  const response = await fetch(target, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'user-agent': WECHAT_USER_AGENT, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  })
  return { url: target.href, status: response.status, headers: response.headers, text: await response.text() }
}

/** The plans page's CSRF token (base64url claims, a dot, a secret: nothing to unescape). */
export function csrfOf(page: PhonePage): string {
  const csrf = /name="csrf" value="([^"]+)"/.exec(page.text)?.[1]
  if (csrf === undefined) throw new Error(`no CSRF token on the page (${page.status}): ${page.text}`)
  return csrf
}

/** The six cashier parameters of a cashier page's `#wechatpay-jsapi`, as the page's script reads them. */
export function cashierParameters(page: PhonePage): { appId: string; timeStamp: string; nonceStr: string; package: string; signType: string; paySign: string } {
  const json = /<script type="application\/json" id="wechatpay-jsapi">([^<]*)<\/script>/.exec(page.text)?.[1]
  if (json === undefined) throw new Error(`no #wechatpay-jsapi on the page (${page.status}): ${page.text}`)
  return JSON.parse(json) as ReturnType<typeof cashierParameters>
}

/**
 * WeChat's cashier, played by the WeChat Pay emulator at `payUrl`: pays the parameters as the
 * person `openid` (its `wxemu_openid` cookie), as its `WeixinJSBridge` stand-in does. Answers the
 * `err_msg` the page's callback would get, and the emulator's reason when it refuses.
 */
export async function cashierPay(payUrl: string, openid: string, parameters: object): Promise<{ err_msg: string; reason?: string }> {
  const response = await fetch(`${payUrl}/emulator/jsapi/pay`, {
    method: 'POST',
    headers: { 'content-type': 'text/plain;charset=UTF-8', cookie: `wxemu_openid=${encodeURIComponent(openid)}` },
    body: JSON.stringify(parameters),
  })
  return (await response.json()) as { err_msg: string; reason?: string }
}

/** The "Buy on this phone" link of a scan's reply, or undefined. */
export function buyLinkOf(reply: string | null | undefined): string | undefined {
  return /<a href="([^"]+)">Buy on this phone<\/a>/.exec(reply ?? '')?.[1]?.replaceAll('&amp;', '&')
}
