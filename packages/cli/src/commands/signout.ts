/**
 * `scanauth signout <openid>`: core's `auth.revokeSessions`, "sign out everywhere".
 *
 * @module
 */
import { expectPositionals, identifierArg } from '../args'
import type { Command } from '../command'
import { count } from '../format'
import { requireUser } from './users'

/** The JSON of `signout`. */
export interface SignoutOutput {
  /** The user's id. */
  userId: number
  /** The user's openid. */
  openid: string
  /** How many live sessions were ended. */
  ended: number
}

export const signoutCommand: Command<{ openid: string }> = {
  name: 'signout',
  usage: 'signout <openid>',
  summary: 'end every live session of the user (its devices must scan again)',
  help: [
    "Ends every live session of the user with this openid through core's auth.revokeSessions: its devices'",
    'tokens stop working at once (401), and a poll of the scene that created one answers expired.',
    'Authorizations are not touched: the next scan signs the user in again. An unknown openid is an',
    'error (exit 1).',
  ],
  options: {},
  examples: ['scanauth signout o6_bmjrPTlm6_2sgVt7hMZOPfL2M'],
  parse(line) {
    const [openid] = expectPositionals('signout', line.positionals, ['openid'])
    return { openid: identifierArg('signout', 'openid', openid as string) }
  },
  async run({ openid }, context) {
    const output = await context.withAuth(async (auth): Promise<SignoutOutput> => {
      const user = await requireUser(auth, openid)
      return { userId: user.id, openid, ended: await auth.revokeSessions({ userId: user.id }) }
    })
    return { json: output, text: [`signed out user #${output.userId} (${openid}): ${count(output.ended, 'session')} ended`] }
  },
}
