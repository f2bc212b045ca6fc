/**
 * The public shape of reminders before access ends (`reminders`, docs/reminders.md,
 * docs/behaviour.md B-remind-1…10): the option, the notifier core hands each message to, and what a
 * pass of `sendReminders` did. Core decides who is due and makes sure nobody is told twice; the
 * notifier only delivers (`createWechatReminderNotifier` of `@scanauth/wechat`).
 *
 * @module
 */

/** The `reminders` option of `createScanAuth`. */
export interface ReminderOptions {
  /**
   * How many days before a time authorization's end to remind, e.g. `[3, 1]`: one message per lead.
   * Whole or fractional days above 0, at most 60, each once.
   */
  leadDays: number[]
  /** Also remind once when an active points authorization has fewer points left than this (and more than 0). */
  pointsBelow?: number
  /** Who delivers the messages. */
  notifier: ReminderNotifier
  /**
   * The public address of the phone pages (`{base}/m/`), for the renewal link (`{url}pay`) and the
   * one-time subscription's redirect (`{url}subscribed`). Default `payments.phone.url`; without
   * either, messages carry no link and no subscription can be offered.
   */
  url?: string | (() => string)
  /**
   * Whether messages carry the renewal link `{url}pay`, the phone pages' plans page. Default: whether
   * this instance sells on the phone (`payments.phone`). A job that sends reminders for a server that
   * sells on the phone, without selling itself (a cron process, the CLI), sets it to true.
   */
  renewal?: boolean
}

/** The one-time subscription (一次性订阅消息) a notifier sends through, when it has one. */
export interface ReminderSubscription {
  /** The account's one-time subscription template id. */
  templateId: string
  /** The `scene` (0–10000) the confirmations are asked for: one message per confirmation and scene. */
  scene: number
  /**
   * WeChat's confirm page for this subscription, which comes back to `redirectUrl` with `openid`,
   * `template_id`, `action`, `scene` and `reserved`
   * (`https://mp.weixin.qq.com/mp/subscribemsg?action=get_confirm&…#wechat_redirect`).
   */
  confirmUrl(input: { redirectUrl: string; reserved: string }): string
}

/** One reminder, as core hands it to the notifier. */
export interface ReminderMessage {
  /** The person's openid. */
  openid: string
  /** Their user id. */
  userId: number
  /** `time`: access ends at `endsAt`; `points`: `remainingPoints` are left. */
  kind: 'time' | 'points'
  /** The lead this message is for, in days (time reminders); null for points. */
  leadDays: number | null
  /** When everything the person holds ends, ISO 8601 (time reminders); null for points. */
  endsAt: string | null
  /** Points left (points reminders); null for time. */
  remainingPoints: number | null
  /** The renewal link, `{url}pay` (the phone's plans page), or null without `payments.phone` or an address. */
  renewUrl: string | null
  /** Whether the person holds a one-time subscription confirmation the notifier may spend (B-remind-6). */
  subscribed: boolean
  /** Channels that could not reach this person lately (the notifier said so); try the others first. */
  unreachableChannels: string[]
  /** When the person last scanned (their last interaction core knows of), ISO 8601. */
  lastSeenAt: string
}

/** What a notifier did with one message. */
export type ReminderDelivery =
  | {
      /** Delivered on `channel`. Never sent again for this authorization and lead. */
      outcome: 'sent'
      /** The channel that delivered it (`subscribe`, `template`, `custom`, or the notifier's own). */
      channel: string
      /** Channels tried first that could not reach the person (remembered for a while). */
      unreachable?: string[]
    }
  | {
      /** No channel can reach this person: recorded, not tried again for this authorization and lead. */
      outcome: 'unreachable'
      /** Why, for the log (no personal data). */
      reason: string
      /** The channels that could not reach the person. */
      unreachable?: string[]
    }
  | {
      /** A failure that may pass (network, a 5xx, a busy system): a later pass tries again. */
      outcome: 'retry'
      /** Why. */
      reason: string
    }
  | {
      /** A quota is used up (45009): this pass stops; a later one goes on. */
      outcome: 'stop'
      /** Why. */
      reason: string
    }

/** Delivers reminders; see {@link ReminderOptions.notifier}. */
export interface ReminderNotifier {
  /** The one-time subscription it can send through, if any: core then offers the "remind me" link. */
  readonly subscription?: ReminderSubscription
  /**
   * The channels it may report `unreachable` (`ReminderDelivery.unreachable`): core remembers those
   * per person for a week and lists them in `ReminderMessage.unreachableChannels`.
   */
  readonly channels?: readonly string[]
  /**
   * Delivers one message, trying its channels in its order. A throw counts as `retry`. It must not
   * send twice for one call; core calls it at most once per authorization and lead across instances.
   */
  send(message: ReminderMessage): Promise<ReminderDelivery>
}

/** Input of `sendReminders`. */
export interface SendRemindersInput {
  /** The time of the pass, epoch ms. Default the service's clock. */
  now?: number
  /** Compute who is due and report it, sending and recording nothing. */
  dryRun?: boolean
  /** At most this many messages in this pass (1–100 000). Default 10 000; `more` says when it stopped early. */
  limit?: number
}

/** What a pass of `sendReminders` did. */
export interface SendRemindersResult {
  /** Authorizations looked at (near their end, or low on points). */
  checked: number
  /** Messages due in this pass (after `dryRun`, those that would be sent). */
  due: number
  /** Delivered. */
  sent: number
  /** Not sent, by why. */
  skipped: {
    /** Another pass or instance claimed it already. */ already_reminded: number
    /** Something queued lasts beyond every lead (or it does not end by the clock). */ renewed: number
    /** The notifier could reach the person on no channel. */ unreachable: number
  }
  /** Failed with a reason that may pass: tried again by a later pass. */
  failed: number
  /** True when a quota stopped the pass (`stop`), or `limit` did. */
  stopped: boolean
  /** Messages sent by channel. */
  byChannel: Record<string, number>
  /** With `dryRun`: who would be told, in order. */
  planned?: Array<{
    /** The person. */ userId: number
    /** The authorization the reminder is keyed by (the last of the chain). */ authorizationId: number
    /** The lead due, in days; null for points. */ leadDays: number | null
    /** `time` or `points`. */ kind: 'time' | 'points'
  }>
}

/** WeChat's redirect back from the one-time subscription page (`{base}/m/subscribed`), as its query names it. */
export interface SubscriptionRedirect {
  /** The person who confirmed; absent on a cancel. */
  openid?: string
  /** The template confirmed (`template_id`). */
  templateId?: string
  /** `confirm` or `cancel`. */
  action?: string
  /** The scene confirmed. */
  scene?: string
  /** The state of the link. */
  reserved?: string
}

/** What the redirect came to: a consent stored, or a cancel that stored nothing. */
export type SubscriptionOutcome = 'subscribed' | 'cancelled'
