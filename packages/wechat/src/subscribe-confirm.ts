/**
 * The link a person opens inside WeChat to allow one reminder: the one-time subscription's confirm
 * page (reference phone-pay-reminders-admin.md §2.1, 一次性订阅消息 step 1). WeChat shows Confirm /
 * Cancel and sends the person back to `redirect_url` with `openid` (on confirm only), `template_id`,
 * `action=confirm|cancel`, `scene` and `reserved`; core checks `reserved` and stores the consent.
 *
 * @module
 */
import type { ReminderSubscription } from '@scanauth/core'
import { WechatError } from './errors'

/** WeChat allows a `reserved` of at most 128 bytes of `[a-zA-Z0-9]` (the CSRF state). */
const RESERVED_PATTERN = /^[A-Za-z0-9]{0,128}$/

/**
 * The subscription core offers: its template id and scene, and `confirmUrl`, which builds
 * `{confirmBase}?action=get_confirm&appid=…&scene=…&template_id=…&redirect_url=<encoded>&reserved=…#wechat_redirect`.
 * `confirmUrl` throws `WechatError` `invalid_argument` for a `redirectUrl` that is not an absolute
 * http(s) URL or a `reserved` WeChat would refuse.
 */
export function subscribeConfirmation(input: { appId: string; templateId: string; scene: number; confirmBase: string }): ReminderSubscription {
  const { appId, templateId, scene, confirmBase } = input
  return {
    templateId,
    scene,
    confirmUrl({ redirectUrl, reserved }) {
      if (typeof redirectUrl !== 'string' || !isHttpUrl(redirectUrl)) {
        throw new WechatError('invalid_argument', 'confirmUrl: redirectUrl must be an absolute http(s) URL')
      }
      if (typeof reserved !== 'string' || !RESERVED_PATTERN.test(reserved)) {
        throw new WechatError('invalid_argument', 'confirmUrl: reserved must be 0 to 128 characters of [A-Za-z0-9] (WeChat limit)')
      }
      // WeChat documents this parameter order, and the page needs the #wechat_redirect fragment.
      return `${confirmBase}?action=get_confirm&appid=${encodeURIComponent(appId)}&scene=${scene}&template_id=${encodeURIComponent(templateId)}&redirect_url=${encodeURIComponent(redirectUrl)}&reserved=${reserved}#wechat_redirect`
    },
  }
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value)
    return url.protocol === 'https:' || url.protocol === 'http:'
  } catch {
    return false
  }
}
