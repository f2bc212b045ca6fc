/**
 * `scanauth revoke <authorizationId>`: core's `auth.revokeAuthorization`.
 *
 * @module
 */
import type { Authorization, RevokeInput } from '@scanauth/core'
import { expectPositionals, integerArg, textArg } from '../args'
import type { Command } from '../command'
import { ScanAuthCliError } from '../errors'
import { authorizationRow, field, table } from '../format'

/** The JSON of `revoke`. */
export interface RevokeOutput {
  /** The authorization, now `revoked`. */
  authorization: Authorization
  /** True when it was revoked before this command (nothing changed). */
  alreadyRevoked: boolean
  /** The user's current authorization after the revocation (the next one of the queue, when the revoked one was active), or null. */
  current: Authorization | null
}

export const revokeCommand: Command<RevokeInput> = {
  name: 'revoke',
  usage: 'revoke <authorizationId> [--reason R]',
  summary: 'revoke a pending or active authorization; the next queued one becomes active',
  help: [
    "Revokes the authorization with this id (`scanauth user` and `scanauth ledger` show ids) through core's",
    'auth.revokeAuthorization: its status becomes revoked, the ledger records a revoke entry with the reason,',
    'and when it was the active one, the next one of the queue becomes active in the same commit.',
    'Revoking a revoked authorization changes nothing (exit 0). An unknown id, or an expired or exhausted',
    'authorization, is refused (exit 1) and changes nothing.',
  ],
  options: {
    reason: { type: 'string', value: 'R', help: 'why, recorded on the ledger entry (1-500 characters)' },
  },
  examples: ['scanauth revoke 42 --reason "refund 2026-118"'],
  parse(line) {
    const [id] = expectPositionals('revoke', line.positionals, ['authorizationId'])
    const authorizationId = integerArg('revoke', 'the authorization id', id as string, 1, Number.MAX_SAFE_INTEGER)
    const reason = line.values.reason === undefined ? undefined : textArg('revoke', '--reason', line.values.reason as string, 500)
    return reason === undefined ? { authorizationId } : { authorizationId, reason }
  },
  async run(input, context) {
    const output = await context.withAuth(async (auth, opened): Promise<RevokeOutput> => {
      // Read first, so that an unknown id is refused without a commit being attempted, and so that a
      // second revocation can be told apart from the first.
      const { authorization: before } = await opened.store.load({ authorizationId: input.authorizationId })
      if (before === null) throw new ScanAuthCliError('authorization_not_found', `no authorization has the id ${input.authorizationId}`)
      const authorization = await auth.revokeAuthorization(input)
      const user = await auth.getUser({ userId: authorization.userId })
      return { authorization, alreadyRevoked: before.status === 'revoked', current: user?.current ?? null }
    })
    const { authorization, current } = output
    const verb = output.alreadyRevoked ? `authorization #${authorization.id} was already revoked` : `revoked authorization #${authorization.id}`
    return {
      json: output,
      text: [
        `${verb} (user #${authorization.userId})${input.reason === undefined || output.alreadyRevoked ? '' : `, reason ${JSON.stringify(input.reason)}`}`,
        ...table([authorizationRow(authorization)], '  '),
        field('current', current === null ? 'none' : (table([authorizationRow(current)])[0] ?? '')),
      ],
    }
  },
}
