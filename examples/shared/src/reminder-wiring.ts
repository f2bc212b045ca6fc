/**
 * Reminders before access ends in the example server (docs/reminders.md): core's `reminders` option
 * with `createWechatReminderNotifier` of `@scanauth/wechat`, and `auth.sendReminders()` on a timer.
 *
 * - The notifier sends through the Official Account: the in-process emulator's send APIs and its
 *   subscription confirm page (`emulator.reminderNotifierOptions()`), or the real account's API (at
 *   `WECHAT_API_BASE`, WeChat's by default), with the QR provider's access token (one token per
 *   process). Its channels, in order: the one-time subscription (`WECHAT_SUBSCRIBE_TEMPLATE_ID`), the
 *   template message (`WECHAT_TEMPLATE_ID_RENEWAL`, its fields from `WECHAT_TEMPLATE_FIELDS_RENEWAL`),
 *   the customer-service message. Emulated, both templates default to demo ids the emulator is told.
 * - The links (the renewal link `{pages}pay`, the "remind me" redirect `{pages}subscribed`) go to the
 *   phone pages, `<public address>/auth/m/`: `SCANAUTH_PUBLIC_URL`, or, with the emulated account, the
 *   address the server listens at. A real account without `SCANAUTH_PUBLIC_URL` sends reminders
 *   without a link and offers no "remind me" link (a phone cannot reach the listening address).
 * - A pass runs every `everyMs` (`SCANAUTH_REMINDERS_INTERVAL_SECONDS`), never two at once, and logs
 *   its counts when it had something due; `scanauth reminders` of `@scanauth/cli` runs the same pass
 *   from cron with the same variables. Several instances may run passes at once: core claims each
 *   reminder in the store first (B-remind-4).
 *
 * @module
 */
import type { ReminderOptions, ScanAuth, SendRemindersResult } from '@scanauth/core'
import { createWechatReminderNotifier, type WechatAccessTokens, type WechatReminderNotifierOptions } from '@scanauth/wechat'
import type { WechatEmulator } from '@scanauth/wechat-emulator'
import type { RemindersConfig } from './reminder-config'
import { every } from './every'

/** The emulated account's one-time subscription template, when `WECHAT_SUBSCRIBE_TEMPLATE_ID` does not name one. */
export const EMULATED_SUBSCRIBE_TEMPLATE_ID = 'demo_subscribe_access_ending'
/** The emulated account's template message for reminders, when `WECHAT_TEMPLATE_ID_RENEWAL` does not name one. */
export const EMULATED_RENEWAL_TEMPLATE_ID = 'demo_template_access_ending'

/** The template ids of the reminders: the configured ones, else, when emulated, the demo ones. */
export function reminderTemplates(reminders: RemindersConfig, emulated: boolean): { subscribeTemplateId?: string; templateId?: string } {
  const subscribeTemplateId = reminders.subscribeTemplateId ?? (emulated ? EMULATED_SUBSCRIBE_TEMPLATE_ID : undefined)
  const templateId = reminders.templateId ?? (emulated ? EMULATED_RENEWAL_TEMPLATE_ID : undefined)
  return { ...(subscribeTemplateId === undefined ? {} : { subscribeTemplateId }), ...(templateId === undefined ? {} : { templateId }) }
}

/**
 * What the in-process emulator must know of the reminders' templates (`startWechatEmulator`'s
 * `subscribeTemplateId` and `templateIds`): it refuses any other id, as WeChat does (40037).
 */
export function emulatorTemplateOptions(reminders: RemindersConfig | undefined): { subscribeTemplateId?: string; templateIds?: string[] } {
  if (reminders === undefined) return {}
  const { subscribeTemplateId, templateId } = reminderTemplates(reminders, true)
  return { ...(subscribeTemplateId === undefined ? {} : { subscribeTemplateId }), ...(templateId === undefined ? {} : { templateIds: [templateId] }) }
}

/** The reminders of a server, ready for `createScanAuth` and its timer. */
export interface ReminderSide {
  /** Core's `reminders` option. */
  option: ReminderOptions
  /** The start-up line's account of them. */
  says: string
  /** A line to log at start when something will not work as one may expect (no link, no channel for days ahead), or undefined. */
  warning: string | undefined
  /** Milliseconds between passes, or false: none (a cron job runs them). */
  everyMs: number | false
}

/** What {@link reminderSide} needs besides the configuration. */
export interface ReminderSideInput {
  /** The Official Account's AppID (the emulated one when emulated). */
  appId: string
  /** The access token's source: the QR provider, so the process keeps one token. */
  tokens: WechatAccessTokens
  /** The in-process emulator, or null with a real account. */
  emulator: WechatEmulator | null
  /** `WECHAT_API_BASE` with a real account. */
  apiBaseUrl?: string
  /** The phone pages' public address (`…/auth/m/`), or undefined when phones cannot reach them. */
  pagesUrl: (() => string) | undefined
  /** The start-up line's words for where the links go. */
  pagesSays: string
  /** The server's log (the notifier's configuration problems, e.g. a template id WeChat calls invalid). */
  log(line: string): void
}

/** Builds the notifier and core's option for `config`. Throws `@scanauth/wechat`'s `invalid_options` for a notifier that cannot work. */
export function reminderSide(config: RemindersConfig, input: ReminderSideInput): ReminderSide {
  const { subscribeTemplateId, templateId } = reminderTemplates(config, input.emulator !== null)
  const account: WechatReminderNotifierOptions =
    input.emulator === null
      ? { appId: input.appId, ...(input.apiBaseUrl === undefined ? {} : { apiBase: input.apiBaseUrl }) }
      : input.emulator.reminderNotifierOptions()
  const fields = config.templateFields
  const notifier = createWechatReminderNotifier({
    ...account,
    tokens: input.tokens,
    ...(subscribeTemplateId === undefined ? {} : { subscribe: { templateId: subscribeTemplateId } }),
    ...(templateId === undefined
      ? {}
      : {
          template: {
            templateId,
            ...(fields === undefined ? {} : { data: (_message, facts) => Object.fromEntries(Object.entries(fields).map(([field, fact]) => [field, { value: facts[fact] }])) }),
          },
        }),
    onError: (error, channel) => input.log(`reminders: WeChat refused the ${channel} channel's settings: ${error instanceof Error ? error.message : String(error)}`),
  })
  const option: ReminderOptions = {
    leadDays: [...config.leadDays],
    notifier,
    ...(config.pointsBelow === undefined ? {} : { pointsBelow: config.pointsBelow }),
    ...(input.pagesUrl === undefined ? {} : { url: input.pagesUrl }),
  }
  const channels = (notifier.channels ?? []).map((channel) =>
    channel === 'subscribe' ? `one-time subscription ${subscribeTemplateId ?? ''}` : channel === 'template' ? `template ${templateId ?? ''}` : 'customer-service',
  )
  const points = config.pointsBelow === undefined ? '' : ` and below ${config.pointsBelow} points`
  const pass = config.everyMs === false ? 'no timer (SCANAUTH_REMINDERS_INTERVAL_SECONDS=0: run scanauth reminders from cron)' : `a pass every ${config.everyMs / 1000} s`
  const days = config.leadDays.length === 1 && config.leadDays[0] === 1 ? 'day' : 'days'
  const says = `reminders ${config.leadDays.join(', ')} ${days} before access ends${points}, ${pass}: ${channels.join(', ')}; ${input.pagesSays}`
  let warning: string | undefined
  if (subscribeTemplateId === undefined && templateId === undefined) {
    warning = 'reminders: customer-service messages only (no WECHAT_SUBSCRIBE_TEMPLATE_ID, no WECHAT_TEMPLATE_ID_RENEWAL): they reach a person only within a minute of a scan, so almost nobody is reminded days ahead'
  } else if (input.pagesUrl === undefined) {
    warning = 'reminders: no public address (SCANAUTH_PUBLIC_URL): messages carry no renewal link, and no "remind me" link is offered, so the one-time subscription cannot be used'
  }
  return { option, says, warning, everyMs: config.everyMs }
}

/**
 * Runs a pass every `everyMs` through {@link every} (first after `everyMs`, never two at once, never
 * holding the process open) and logs a pass that had something due or stopped early. Returns the
 * stop function, which resolves once a running pass has finished.
 */
export function startReminderTimer(auth: Pick<ScanAuth, 'sendReminders'>, options: { everyMs: number; log: (line: string) => void }): () => Promise<void> {
  return every({ ...options, name: 'reminders' }, async () => {
    const result = await auth.sendReminders()
    return result.due === 0 && !result.stopped ? null : reminderLine(result)
  })
}

/**
 * One line for a pass: `reminders: 2 sent (subscribe 1, template 1), 1 unreachable, 0 failed; 3 already
 * reminded, 1 renewed; 7 checked`, and `; stopped early` when a quota or WeChat's refusal ended it.
 */
export function reminderLine(result: SendRemindersResult): string {
  const channels = Object.entries(result.byChannel).map(([channel, n]) => `${channel} ${n}`)
  const sent = `${result.sent} sent${channels.length === 0 ? '' : ` (${channels.join(', ')})`}`
  const { already_reminded: already, renewed, unreachable } = result.skipped
  const stopped = result.stopped ? '; stopped early (a quota, WeChat refusing the account, or the limit: the next pass goes on)' : ''
  return `reminders: ${sent}, ${unreachable} unreachable, ${result.failed} failed (tried again later); ${already} already reminded, ${renewed} renewed; ${result.checked} checked${stopped}`
}
