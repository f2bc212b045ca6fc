/**
 * The one-time subscription's confirm page, as WeChat serves it at
 * `https://mp.weixin.qq.com/mp/subscribemsg?action=get_confirm&appid=&scene=&template_id=&redirect_url=&reserved=#wechat_redirect`
 * (reference phone-pay-reminders-admin.md §2.1): it checks the link, shows Confirm / Cancel, and
 * sends the phone to `redirect_url` with `openid` (on confirm only), `template_id`, `action`,
 * `scene` and `reserved`. A Confirm is recorded as one message's worth of consent for that user,
 * template and scene (subscriptions.ts), which `message/template/subscribe` spends.
 *
 * The phone's user is decided as on the web OAuth authorize page: the `wxemu_openid` cookie, else
 * the demo user. The buttons post the link's parameters back (`POST /mp/subscribemsg`), so the
 * decision is one request a browser, a test's `fetch` or `confirmSubscription` can make alike.
 *
 * @module
 */
import { escapeHtml } from './html'
import type { SubscribeConsents } from './subscriptions'
import type { EmulatorUsers } from './users'

/** The confirm page's path, as on `mp.weixin.qq.com`. */
export const SUBSCRIBE_CONFIRM_PATH = '/mp/subscribemsg'

/** A confirm link's parameters, checked. */
export interface ConfirmLink {
  appid: string
  scene: string
  templateId: string
  redirectUrl: string
  reserved: string
}

/** What the page needs of the account. */
export interface ConfirmPageDeps {
  appId: string
  /** The account's one-time template id; null: any. */
  subscribeTemplateId: string | null
  consents: SubscribeConsents
  users: EmulatorUsers
  now: () => number
}

/** The link's parameters, or why WeChat's page would refuse them. */
export function readConfirmLink(params: URLSearchParams, deps: Pick<ConfirmPageDeps, 'appId' | 'subscribeTemplateId'>): { ok: true; link: ConfirmLink } | { ok: false; reason: string } {
  const appid = params.get('appid') ?? ''
  if (appid === '') return { ok: false, reason: 'appid is missing' }
  if (appid !== deps.appId) return { ok: false, reason: `appid ${appid} is not this account's (${deps.appId})` }
  const scene = params.get('scene') ?? ''
  if (!/^\d{1,5}$/.test(scene) || Number(scene) > 10_000) return { ok: false, reason: 'scene must be an integer from 0 to 10000' }
  const templateId = params.get('template_id') ?? ''
  if (templateId === '') return { ok: false, reason: 'template_id is missing' }
  if (deps.subscribeTemplateId !== null && templateId !== deps.subscribeTemplateId) return { ok: false, reason: `template_id ${templateId} is not this account's one-time template` }
  const redirectUrl = params.get('redirect_url') ?? ''
  if (redirectUrl === '') return { ok: false, reason: 'redirect_url is missing' }
  if (!isHttpUrl(redirectUrl)) return { ok: false, reason: 'redirect_url is not an absolute http(s) URL (is it URL-encoded?)' }
  const reserved = params.get('reserved') ?? ''
  if (!/^[A-Za-z0-9]{0,128}$/.test(reserved)) return { ok: false, reason: 'reserved must be at most 128 characters of [a-zA-Z0-9]' }
  return { ok: true, link: { appid, scene, templateId, redirectUrl, reserved } }
}

/**
 * The phone's answer to the page: records a Confirm (once per user, template and scene: confirming
 * again adds nothing) and answers where WeChat sends the phone.
 */
export function answerConfirmLink(link: ConfirmLink, openid: string, action: 'confirm' | 'cancel', deps: ConfirmPageDeps): string {
  if (action === 'confirm') {
    deps.users.know(openid)
    deps.consents.grant(openid, link.templateId, link.scene, deps.now())
  }
  const target = new URL(link.redirectUrl)
  const back = new URLSearchParams()
  // `openid` only on confirm, first, as WeChat documents the redirect.
  if (action === 'confirm') back.set('openid', openid)
  back.set('template_id', link.templateId)
  back.set('action', action)
  back.set('scene', link.scene)
  back.set('reserved', link.reserved)
  target.search = `${target.search === '' ? '?' : `${target.search}&`}${back}`
  return target.href
}

/** The page: who is asked, for which account, and the two buttons (forms posting the link back). */
export function confirmPageHtml(link: ConfirmLink, openid: string): string {
  const hidden = [
    ['appid', link.appid],
    ['scene', link.scene],
    ['template_id', link.templateId],
    ['redirect_url', link.redirectUrl],
    ['reserved', link.reserved],
  ]
    .map(([name, value]) => `<input type="hidden" name="${name}" value="${escapeHtml(value ?? '')}">`)
    .join('')
  const form = (action: 'confirm' | 'cancel', label: string) =>
    `<form method="post" action="${SUBSCRIBE_CONFIRM_PATH}">${hidden}<input type="hidden" name="action" value="${action}"><button type="submit" class="${action}">${label}</button></form>`
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Receive a message · WeChat emulator</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:26rem;margin:2rem auto;padding:0 1rem;color:#222}
.muted{color:#666}form{display:inline-block;margin:.5rem .5rem 0 0}button{font-size:1rem;padding:.5rem 1.5rem;cursor:pointer}
button.confirm{background:#07c160;color:#fff;border:0;border-radius:4px}button.cancel{background:none;border:1px solid #bbb;border-radius:4px}</style></head>
<body><h1>Receive one message</h1>
<p>The Official Account <b>${escapeHtml(link.appid)}</b> asks to send you one message (template <code>${escapeHtml(link.templateId)}</code>, scene ${escapeHtml(link.scene)}).</p>
<p class="muted">You are ${escapeHtml(openid)} (the emulated phone's user).</p>
${form('confirm', 'Confirm')}${form('cancel', 'Cancel')}
</body></html>
`
}

/** A 400 page saying why the link is refused, as WeChat shows an error page. */
export function refusedPageHtml(reason: string): string {
  return `<!doctype html><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>WeChat subscription</title><p>This link cannot be opened: ${escapeHtml(reason)}</p>`
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value)
    return url.protocol === 'http:' || url.protocol === 'https:'
  } catch {
    return false
  }
}
