/**
 * Which openids are users of which app. WeChat's openids are per app: the same person has another
 * openid under every appid, and a JSAPI order names its payer by the openid under the order's appid
 * (reference phone-pay-reminders-admin.md §1.2). The emulator knows no real users, so by default it
 * believes any openid, except one a test marks as a stranger's with {@link FOREIGN_OPENID_PREFIX};
 * the `openidBelongs` option replaces the rule (e.g. a fixed list of the openids the app was told of).
 *
 * @module
 */

/** Openids starting with this belong to another app, by the default rule of {@link defaultOpenidBelongs}. */
export const FOREIGN_OPENID_PREFIX = 'other-app:'

/** The default of the `openidBelongs` option: any non-empty openid without {@link FOREIGN_OPENID_PREFIX}. */
export function defaultOpenidBelongs(_appid: string, openid: string): boolean {
  return openid !== '' && !openid.startsWith(FOREIGN_OPENID_PREFIX)
}
