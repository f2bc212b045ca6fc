/**
 * WeChat web OAuth as core needs it, for the confirm page and the phone pages: a module of its own,
 * so that both name it without importing each other.
 *
 * @module
 */

/**
 * WeChat web OAuth as core needs it (`snsapi_base`): where to send the phone, and the openid behind
 * the code it comes back with. `createWechatWebOAuth` of `@scanauth/wechat` implements it.
 */
export interface WebOAuthProvider {
  /**
   * The address that asks WeChat who the person is and comes back to `redirectUri` with `code` and
   * `state` (`https://open.weixin.qq.com/connect/oauth2/authorize?…&scope=snsapi_base&state=…#wechat_redirect`).
   */
  authorizeUrl(input: { redirectUri: string; state: string }): string
  /**
   * The openid the platform answers for `code`, or null when it refuses the code (unknown, used,
   * expired). Throws when the platform cannot be asked (network, timeout, a 5xx): that is no answer.
   */
  exchangeCode(code: string): Promise<string | null>
}
