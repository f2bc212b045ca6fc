/**
 * `scanauth grant <openid> --days N | --points N`: core's `auth.grant` by openid.
 *
 * @module
 */
import type { Authorization, GrantInput } from '@scanauth/core'
import { expectPositionals, identifierArg, integerArg } from '../args'
import type { Command } from '../command'
import { ScanAuthCliError } from '../errors'
import { authorizationRow, table } from '../format'

/** Seconds in a day: `--days N` grants `N × 86400` seconds. */
const DAY_SECONDS = 86_400
/** The longest time grant core accepts: 100 years (36525 days). */
export const MAX_DAYS = 36_525

/** The JSON of `grant`. */
export interface GrantOutput {
  /** The authorization as stored after the activation step: `active`, or `pending` in the queue. */
  authorization: Authorization
}

export const grantCommand: Command<GrantInput & { openid: string }> = {
  name: 'grant',
  usage: 'grant <openid> (--days N | --points N) [--source S] [--idempotency-key K]',
  summary: 'grant time or points (a new openid becomes a user, without the free trial)',
  help: [
    "Grants a time authorization of N days (N × 86400 seconds) or a points authorization of N points to",
    'the user with this openid, through core\'s auth.grant: it becomes active at once when the user has',
    'nothing active, and otherwise waits its turn in the queue (a queued time grant keeps its length).',
    'An openid nobody has used yet becomes a new user, without the free trial (as a grant from a payment',
    'notification would). With --idempotency-key, repeating the command grants nothing more and prints',
    'the first grant; the same key with other parameters is refused (exit 1) and changes nothing.',
  ],
  options: {
    days: { type: 'string', value: 'N', help: `days of access, a whole number from 1 to ${MAX_DAYS}` },
    points: { type: 'string', value: 'N', help: 'points, a whole number from 1' },
    source: { type: 'string', value: 'S', help: "where it came from (default admin; 1-128 characters; 'free' is reserved for the free trial)" },
    'idempotency-key': { type: 'string', value: 'K', help: 'makes the grant safe to repeat (1-128 characters, one namespace per store with the servers\' keys)' },
  },
  examples: [
    'scanauth grant o6_bmjrPTlm6_2sgVt7hMZOPfL2M --days 30 --source support --idempotency-key ticket-4711',
    'scanauth grant o6_bmjrPTlm6_2sgVt7hMZOPfL2M --points 100 --json',
  ],
  parse(line) {
    const [raw] = expectPositionals('grant', line.positionals, ['openid'])
    const openid = identifierArg('grant', 'openid', raw as string)
    const days = line.values.days as string | undefined
    const points = line.values.points as string | undefined
    if ((days === undefined) === (points === undefined)) {
      throw new ScanAuthCliError('usage', 'grant needs exactly one of --days N and --points N (see scanauth grant --help)')
    }
    const source = line.values.source === undefined ? undefined : identifierArg('grant', '--source', line.values.source as string)
    if (source === 'free') throw new ScanAuthCliError('usage', "--source free is reserved for the free trial of a first scan (see scanauth grant --help)")
    const key = line.values['idempotency-key']
    const common = {
      openid,
      ...(source === undefined ? {} : { source }),
      ...(key === undefined ? {} : { idempotencyKey: identifierArg('grant', '--idempotency-key', key as string) }),
    }
    if (days !== undefined) return { ...common, type: 'time', durationSeconds: integerArg('grant', '--days', days, 1, MAX_DAYS) * DAY_SECONDS }
    return { ...common, type: 'points', points: integerArg('grant', '--points', points as string, 1, Number.MAX_SAFE_INTEGER) }
  },
  async run(input, context) {
    const authorization = await context.withAuth((auth) => auth.grant(input))
    const output: GrantOutput = { authorization }
    const key = input.idempotencyKey === undefined ? '' : `  key ${input.idempotencyKey}`
    return {
      json: output,
      text: [`granted to user #${authorization.userId} (${input.openid})${key}`, ...table([authorizationRow(authorization)], '  ')],
    }
  },
}
