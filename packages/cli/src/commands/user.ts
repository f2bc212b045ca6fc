/**
 * `scanauth user <openid>`: everything about one user at a glance. Reads only.
 *
 * @module
 */
import type { LedgerEntry, UserInfo } from '@scanauth/core'
import { expectPositionals, identifierArg } from '../args'
import type { Command } from '../command'
import { authorizationRow, count, field, ledgerRow, sessionRow, sessionView, table, time, type SessionView } from '../format'
import { eachLedgerEntry, liveSessionsOf, requireUser } from './users'

/** How many of the latest live sessions are listed. */
export const LATEST_SESSIONS = 5
/** How many of the last ledger entries are listed. */
export const LAST_LEDGER_ENTRIES = 10

/** The JSON of `user`. */
export interface UserOutput {
  /** The user with its current authorization and its queue, as core's `getUser` answers. */
  user: UserInfo
  /** Its live sessions. */
  sessions: {
    /** How many sessions are live. */
    live: number
    /** The latest of them, newest first, with their tokens cut short. */
    latest: SessionView[]
  }
  /** Its ledger. */
  ledger: {
    /** How many entries it has. */
    total: number
    /** The last few, oldest first. */
    last: LedgerEntry[]
  }
}

export const userCommand: Command<{ openid: string }> = {
  name: 'user',
  usage: 'user <openid>',
  summary: 'the user, its current authorization and queue, live sessions, the last ledger entries',
  help: [
    'Shows the user with this openid: when it was created and last seen, whether it had the free trial,',
    'its current authorization and its queue (pending authorizations in the order they will become',
    `active), how many sessions are live with the latest ${LATEST_SESSIONS} (tokens cut to their first characters),`,
    `and the last ${LAST_LEDGER_ENTRIES} entries of its ledger. Reads only; an unknown openid is an error (exit 1).`,
  ],
  options: {},
  examples: ['scanauth user o6_bmjrPTlm6_2sgVt7hMZOPfL2M', 'scanauth user o6_bmjrPTlm6_2sgVt7hMZOPfL2M --json --redis redis://10.0.0.5:6379'],
  parse(line) {
    const [openid] = expectPositionals('user', line.positionals, ['openid'])
    return { openid: identifierArg('user', 'openid', openid as string) }
  },
  async run({ openid }, context) {
    const output = await context.withAuth(async (auth, opened): Promise<UserOutput> => {
      const user = await requireUser(auth, openid)
      const last: LedgerEntry[] = []
      let total = 0
      const [sessions] = await Promise.all([
        liveSessionsOf(opened, user.id, context.now(), LATEST_SESSIONS),
        eachLedgerEntry(auth, user.id, (entry) => {
          total++
          last.push(entry)
          if (last.length > LAST_LEDGER_ENTRIES) last.shift()
        }),
      ])
      return { user, sessions: { live: sessions.live, latest: sessions.latest.map(sessionView) }, ledger: { total, last } }
    })
    return { json: output, text: userText(output) }
  },
}

function userText({ user, sessions, ledger }: UserOutput): string[] {
  const shownSessions = sessions.latest.length < sessions.live ? `, the latest ${sessions.latest.length}` : ''
  const shownEntries = ledger.total > ledger.last.length ? `, the last ${ledger.last.length}` : ''
  return [
    field('user', `#${user.id}  ${user.openid}`),
    field('created', time(user.createdAt)),
    field('last seen', time(user.lastSeenAt)),
    field('free trial', user.hasClaimedFree ? 'claimed' : 'not claimed'),
    field('current', user.current === null ? 'none' : (table([authorizationRow(user.current)])[0] ?? '')),
    field('queue', user.queue.length === 0 ? 'empty' : `${user.queue.length} pending`),
    ...table(user.queue.map(authorizationRow), '  '),
    field('sessions', `${sessions.live} live${shownSessions}`),
    ...table(sessions.latest.map(sessionRow), '  '),
    field('ledger', `${count(ledger.total, 'entry', 'entries')}${shownEntries}`),
    ...table(ledger.last.map(ledgerRow), '  '),
  ]
}
