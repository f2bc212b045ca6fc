/**
 * What a failed reminder send means for the pass that makes it: one pure function over one table,
 * so every documented code has exactly one answer and a test each (reference
 * phone-pay-reminders-admin.md §2.1).
 *
 * - `unreachable`: this channel cannot reach this user (not a follower, messages turned off, out of
 *   the customer-service window, no such openid). The notifier tries its next channel; core remembers
 *   it for the person. Some of these are the operator's mistake, not the user's (`configuration`): an
 *   invalid template id, a field WeChat refuses, an API the account may not use. They are reported
 *   through `onError` and still only close this channel, so the other channels keep working.
 * - `retry`: it may pass (the network, a timeout, a 5xx, WeChat busy): a later pass tries again.
 * - `stop`: no further send in this pass can succeed (a quota is used up, the account's credentials
 *   or IP whitelist are wrong): the pass stops, a later one goes on.
 *
 * A refused access token (40001/40014/42001) never gets here on the first try: the call is repeated
 * once with a fresh token (access-token.ts); a second refusal is `stop`.
 *
 * @module
 */
import { TOKEN_ERRCODES, WechatApiError, WechatHttpError } from './errors'

/** What a failure of one channel means. */
export type ReminderFailure =
  | {
      /** This channel cannot reach this person: the next channel is tried. */
      kind: 'unreachable'
      /** Why, for the log: the errcode and its meaning, no personal data. */
      reason: string
      /** True when the operator must fix something (reported through `onError`). */
      configuration: boolean
    }
  | {
      /** It may pass: a later pass tries again. */
      kind: 'retry'
      /** Why, for the log. */
      reason: string
    }
  | {
      /** No further send of this pass can succeed: the pass stops. */
      kind: 'stop'
      /** Why, for the log. */
      reason: string
    }

/** One row of {@link REMINDER_ERRCODES}. */
export interface ReminderErrcodeRule {
  /** What the code means for the pass. */
  kind: ReminderFailure['kind']
  /** What the code means, as the reason names it. */
  meaning: string
  /** The operator must fix something (only for `unreachable`; `stop` rows name their fix in `meaning`). */
  configuration?: boolean
}

/** Every errcode the send APIs are documented (or seen) to answer, and what it means for a pass. */
export const REMINDER_ERRCODES: Readonly<Record<number, ReminderErrcodeRule>> = {
  43004: { kind: 'unreachable', meaning: 'require subscribe: the user does not follow the account' },
  43101: { kind: 'unreachable', meaning: 'user refuse to accept the msg: messages turned off, or no subscription left' },
  45015: { kind: 'unreachable', meaning: 'response out of time limit: outside the customer-service window, or unfollowed' },
  40003: { kind: 'unreachable', meaning: 'invalid openid: not a user of this account' },
  40037: { kind: 'unreachable', meaning: 'invalid template_id: check the template id configured for this channel', configuration: true },
  47003: { kind: 'unreachable', meaning: 'argument invalid: WeChat refuses a field of the message (check the template data mapping)', configuration: true },
  48001: { kind: 'unreachable', meaning: 'api unauthorized: the account may not use this API (verified service account, permission enabled?)', configuration: true },
  45009: { kind: 'stop', meaning: 'daily API quota used up' },
  // Per person: the messages their last interaction allows are used up. This channel cannot reach
  // them now; the pass goes on for everyone else.
  45047: { kind: 'unreachable', meaning: 'out of response count limit: the messages the last interaction allows are used up' },
  45011: { kind: 'stop', meaning: 'API minute quota reached: slow down' },
  40013: { kind: 'stop', meaning: 'invalid appid: check appId' },
  40125: { kind: 'stop', meaning: 'invalid appsecret: check appSecret' },
  40243: { kind: 'stop', meaning: 'the AppSecret is frozen' },
  40164: { kind: 'stop', meaning: "this server's IP is not on the account's IP whitelist" },
  41001: { kind: 'stop', meaning: 'access token missing' },
  [-1]: { kind: 'retry', meaning: 'system busy' },
}

/**
 * What `error`, thrown by one channel's send, means for the pass. Unknown errcodes are `retry`: a
 * later pass tries again rather than lose the message, and the reason names the code for the log.
 */
export function classifyReminderError(error: unknown): ReminderFailure {
  if (error instanceof WechatApiError) {
    const code = error.errcode
    if (TOKEN_ERRCODES.has(code)) {
      // Only after the call was repeated with a fresh token: the token endpoint hands out tokens the
      // API refuses, which no later send of this pass will change.
      return { kind: 'stop', reason: `errcode ${code}: the access token was refused again after a refresh` }
    }
    const rule = REMINDER_ERRCODES[code]
    if (rule === undefined) return { kind: 'retry', reason: `errcode ${code} (${error.errmsg || 'no errmsg'})` }
    const reason = `errcode ${code} (${rule.meaning})`
    return rule.kind === 'unreachable' ? { kind: 'unreachable', reason, configuration: rule.configuration === true } : { kind: rule.kind, reason }
  }
  if (error instanceof WechatHttpError) {
    // A 4xx from the API host is our set-up (a wrong apiBase, a proxy refusing us): no send of this
    // pass will fare better. A 5xx, a timeout, the network or a garbled answer may pass.
    if (error.failure === 'http_status' && error.httpStatus !== undefined && error.httpStatus >= 400 && error.httpStatus <= 499) {
      return { kind: 'stop', reason: `HTTP ${error.httpStatus} from ${error.endpoint}` }
    }
    return { kind: 'retry', reason: error.failure === 'http_status' ? `HTTP ${error.httpStatus ?? '?'} from ${error.endpoint}` : `${error.failure} (${error.endpoint})` }
  }
  return { kind: 'retry', reason: error instanceof Error ? error.message : String(error) }
}
