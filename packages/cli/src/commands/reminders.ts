/**
 * `scanauth reminders [--now ISO] [--dry-run]`: one pass of reminders before access ends
 * (`auth.sendReminders`, docs/reminders.md) against the store and the Official Account the servers
 * use, for a cron job. The settings are the example servers' variables (reminder-config.ts); the
 * notifier is `createWechatReminderNotifier` of `@scanauth/wechat`, as the servers build it. Core
 * claims each reminder in the store before it is sent, so a pass here beside the servers' own timers,
 * or two cron jobs at once, tell nobody twice (B-remind-4).
 *
 * @module
 */
import type { ReminderDelivery, ReminderNotifier, ReminderOptions, SendRemindersResult } from '@scanauth/core'
import type { WechatReminderNotifierOptions } from '@scanauth/wechat'
import { expectPositionals } from '../args'
import type { Command } from '../command'
import { ScanAuthCliError, reasonOf } from '../errors'
import { count, iso, table, time } from '../format'
import { reminderSettings, type ReminderSettings } from '../reminder-config'

/** Why messages were not sent, counted: the notifier's reasons (WeChat's errcodes, never personal data). */
export interface ReminderProblem {
  /** `unreachable` (recorded, not tried again for that lead), `retry` (tried again by a later pass) or `stop` (ended the pass). */
  outcome: 'unreachable' | 'retry' | 'stop'
  /** The notifier's reason, e.g. `template: 43004 require subscribe`. */
  reason: string
  /** How many messages ended so. */
  count: number
}

/** The JSON of `reminders`: core's `SendRemindersResult`, and what the pass ran with. */
export interface RemindersOutput extends SendRemindersResult {
  /** The time of the pass, ISO 8601 (`--now`, else the clock). */
  now: string
  /** `--dry-run`: nothing was sent, claimed or recorded. */
  dryRun: boolean
  /** `SCANAUTH_REMINDERS`. */
  leadDays: number[]
  /** `SCANAUTH_REMINDERS_POINTS_BELOW`, or null. */
  pointsBelow: number | null
  /** The channels tried, in order (none for a dry run without an account). */
  channels: string[]
  /** The phone pages the messages link to (`SCANAUTH_PUBLIC_URL` + `/auth/m/`), or null: no renewal link. */
  links: string | null
  /** The reasons of the messages not sent. */
  problems: ReminderProblem[]
}

/** What `reminders` reads from its line. */
interface RemindersInput {
  /** `--now`, epoch milliseconds. */
  now?: number
  dryRun: boolean
}

export const remindersCommand: Command<RemindersInput> = {
  name: 'reminders',
  usage: 'reminders [--now ISO] [--dry-run]',
  summary: 'one pass of reminders before access ends, with the servers\' store and WeChat settings (for cron)',
  help: [
    'Runs one pass of reminders before access ends (auth.sendReminders of @scanauth/core): every person whose',
    'access ends within a lead of SCANAUTH_REMINDERS, or whose points fall below SCANAUTH_REMINDERS_POINTS_BELOW,',
    'gets one WeChat message per lead, with the link to renew. Safe beside servers that run passes of their',
    'own and beside other cron jobs: each reminder is claimed in the store before it is sent, so nobody is',
    'told twice. A failure that may pass (the network, WeChat busy) is tried again by the next pass; a quota',
    'ends the pass. The exit status is 0 once the pass ran, whatever it could send: the output says.',
    '',
    'It reads the variables the example servers read (the same environment as theirs):',
    ...table(
      [
        ['SCANAUTH_REMINDERS', 'the lead days, e.g. 3,1 (required)'],
        ['SCANAUTH_REMINDERS_POINTS_BELOW', 'also remind once when a points authorization falls below this'],
        ['WECHAT_APP_ID, WECHAT_APP_SECRET', 'the Official Account (required unless --dry-run)'],
        ['WECHAT_API_BASE', "the API base (default WeChat's), e.g. an emulator or a proxy"],
        ['WECHAT_SUBSCRIBE_TEMPLATE_ID', 'the one-time subscription template (the "remind me" link)'],
        ['WECHAT_TEMPLATE_ID_RENEWAL', 'a template message, for followers'],
        ['WECHAT_TEMPLATE_FIELDS_RENEWAL', 'its fields: {"field":"fact"} of headline, subject, ends, remaining, status, action'],
        ['SCANAUTH_PUBLIC_URL', 'the public address of the servers: the messages link to <it>/auth/m/pay'],
      ],
      '  ',
    ),
    'The channels are tried in that order: the one-time subscription (for people who confirmed its link),',
    'the template message, the customer-service message (only a minute after a scan).',
  ],
  options: {
    now: { type: 'string', value: 'ISO', help: 'run the pass as at this time, e.g. 2026-12-01T08:00:00Z (default now)' },
    'dry-run': { type: 'boolean', help: 'say who is due and send, claim and record nothing' },
  },
  examples: [
    'scanauth reminders --sqlite /srv/app/data/scanauth.sqlite',
    'scanauth reminders --json                      # every 5 minutes from cron, with the servers\' environment',
    'scanauth reminders --now 2026-12-01T08:00:00Z --dry-run',
  ],
  parse(line) {
    expectPositionals('reminders', line.positionals, [])
    const raw = line.values.now
    const input: RemindersInput = { dryRun: line.values['dry-run'] === true }
    if (typeof raw === 'string') input.now = isoArg(raw)
    return input
  },
  async run(input, context) {
    // Everything is checked before the store is opened: the variables, then the notifier's options.
    const settings = reminderSettings(context.env, input.dryRun)
    const problems = new Map<string, ReminderProblem>()
    const notifier = await notifierOf(settings, problems)
    const reminders: ReminderOptions = {
      leadDays: settings.leadDays,
      notifier,
      ...(settings.pointsBelow === undefined ? {} : { pointsBelow: settings.pointsBelow }),
      // The servers' phone pages: the renewal link goes there (the CLI sells nothing itself).
      ...(settings.pagesUrl === undefined ? {} : { url: settings.pagesUrl, renewal: true }),
    }
    const at = input.now ?? context.now()
    const result = await context.withAuth((auth) => auth.sendReminders({ now: at, dryRun: input.dryRun }), { reminders })
    const output: RemindersOutput = {
      now: iso(at),
      dryRun: input.dryRun,
      leadDays: settings.leadDays,
      pointsBelow: settings.pointsBelow ?? null,
      channels: [...(notifier.channels ?? [])],
      links: settings.pagesUrl ?? null,
      ...result,
      problems: [...problems.values()],
    }
    return { json: output, text: remindersText(output) }
  },
}

/** `--now`: an ISO 8601 time with its zone (`Z` or `±hh:mm`), a real date and time. */
function isoArg(raw: string): number {
  const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?(Z|[+-]\d{2}:\d{2})$/.exec(raw)
  const usage = () => new ScanAuthCliError('usage', `--now must be an ISO 8601 time with its zone, e.g. 2026-12-01T08:00:00Z, not ${JSON.stringify(raw)} (see scanauth reminders --help)`)
  if (match === null) throw usage()
  const [, y, mo, d, h, mi, s = '0', frac = '0', zone] = match
  const [year, month, day, hour, minute, second] = [y, mo, d, h, mi, s].map(Number) as [number, number, number, number, number, number]
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate()
  if (year < 1970 || month < 1 || month > 12 || day < 1 || day > daysInMonth || hour > 23 || minute > 59 || second > 59) throw usage()
  const offset = zone === 'Z' ? 0 : (zone!.startsWith('-') ? -1 : 1) * (Number(zone!.slice(1, 3)) * 60 + Number(zone!.slice(4, 6)))
  const ms = Date.UTC(year, month - 1, day, hour, minute, second, Number(frac.padEnd(3, '0'))) - offset * 60_000
  if (!Number.isSafeInteger(ms) || ms < 0) throw usage()
  return ms
}

/**
 * The notifier of the settings, as the servers build it, wrapped to count why messages were not
 * sent. A dry run without an account gets one that is never called (a dry run sends nothing).
 * `@scanauth/wechat` is loaded here, as the store drivers are where they are used: other commands
 * never load it.
 */
async function notifierOf(settings: ReminderSettings, problems: Map<string, ReminderProblem>): Promise<ReminderNotifier> {
  const { account } = settings
  if (account === null) {
    return { channels: [], send: async () => ({ outcome: 'retry', reason: 'a dry run sends nothing' }) }
  }
  const fields = settings.templateFields
  const options: WechatReminderNotifierOptions = {
    appId: account.appId,
    appSecret: account.appSecret,
    ...(account.apiBase === undefined ? {} : { apiBase: account.apiBase }),
    ...(settings.subscribeTemplateId === undefined ? {} : { subscribe: { templateId: settings.subscribeTemplateId } }),
    ...(settings.templateId === undefined
      ? {}
      : {
          template: {
            templateId: settings.templateId,
            ...(fields === undefined ? {} : { data: (_message, facts) => Object.fromEntries(Object.entries(fields).map(([field, fact]) => [field, { value: facts[fact] }])) }),
          },
        }),
  }
  const { createWechatReminderNotifier, WechatError } = await import('@scanauth/wechat')
  let notifier: ReminderNotifier
  try {
    notifier = createWechatReminderNotifier(options)
  } catch (error) {
    if (error instanceof WechatError) throw new ScanAuthCliError('invalid_config', `the WeChat variables do not make a reminder notifier: ${reasonOf(error)}`, { cause: error })
    throw error
  }
  const note = (outcome: ReminderProblem['outcome'], reason: string) => {
    const key = `${outcome}\n${reason}`
    const known = problems.get(key)
    if (known === undefined) problems.set(key, { outcome, reason, count: 1 })
    else known.count++
  }
  return {
    ...notifier,
    async send(message): Promise<ReminderDelivery> {
      let delivery: ReminderDelivery
      try {
        delivery = await notifier.send(message)
      } catch (error) {
        note('retry', reasonOf(error))
        throw error
      }
      if (delivery.outcome !== 'sent') note(delivery.outcome, delivery.reason)
      return delivery
    },
  }
}

/** The text of `reminders`: one line of counts, then what was planned (dry run) or why messages were not sent. */
function remindersText(o: RemindersOutput): string[] {
  const leads = `leads ${o.leadDays.join(', ')} days${o.pointsBelow === null ? '' : `, below ${o.pointsBelow} points`}`
  const skipped = `${o.skipped.renewed} renewed; ${count(o.checked, 'authorization')} checked`
  if (o.dryRun) {
    const lines = [`dry run at ${time(o.now)} (${leads}): ${o.due} due, nothing sent or recorded (a pass skips those reminded already); ${skipped}`]
    const rows = (o.planned ?? []).map((p) => [
      `user #${p.userId}`,
      `auth #${p.authorizationId}`,
      p.kind,
      p.kind === 'points' ? `below ${o.pointsBelow ?? '?'} points` : `${count(p.leadDays ?? 0, 'day')} before the end`,
    ])
    return [...lines, ...table(rows, '  ')]
  }
  const channels = Object.entries(o.byChannel).map(([channel, n]) => `${channel} ${n}`)
  const sent = `${o.sent} sent${channels.length === 0 ? '' : ` (${channels.join(', ')})`}`
  const lines = [
    `reminders at ${time(o.now)} (${leads}): ${sent}, ${o.skipped.unreachable} unreachable, ${o.failed} failed; ${o.skipped.already_reminded} already reminded, ${skipped}`,
  ]
  if (o.stopped) lines.push('stopped early (a quota, WeChat refusing the account, or 10000 messages in one pass): the next pass goes on')
  lines.push(...table(o.problems.map((p) => [p.outcome, `${count(p.count, 'message')}`, p.reason]), '  '))
  if (o.links === null && o.sent > 0) lines.push('the messages carry no renewal link: set SCANAUTH_PUBLIC_URL, the servers\' public address')
  return lines
}
