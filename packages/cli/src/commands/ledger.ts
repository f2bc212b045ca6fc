/**
 * `scanauth ledger <openid>`: core's `auth.listLedger`, a page at a time.
 *
 * @module
 */
import type { LedgerEntry } from '@scanauth/core'
import { expectPositionals, identifierArg, integerArg } from '../args'
import type { Command } from '../command'
import { count, ledgerRow, table } from '../format'
import { LEDGER_PAGE, requireUser } from './users'

/** The JSON of `ledger`: core's page, with the user it belongs to. */
export interface LedgerOutput {
  /** The user. */
  user: {
    /** Its id. */
    id: number
    /** Its openid. */
    openid: string
  }
  /** The entries after `--after`, oldest first. */
  entries: LedgerEntry[]
  /** The `--after` of the next page; null on the last page. */
  nextAfterId: number | null
}

export const ledgerCommand: Command<{ openid: string; afterId: number; limit: number }> = {
  name: 'ledger',
  usage: 'ledger <openid> [--after ID] [--limit N]',
  summary: "the user's ledger: every grant, activation, use, expiry and revocation, oldest first",
  help: [
    "Lists the ledger of the user with this openid (core's auth.listLedger): each change to its",
    'authorizations with the points it changed, the points left, and the source, idempotency key or',
    'reason where they apply. A page holds --limit entries after the entry --after; the last line says',
    'how to ask for the next page. Reads only; an unknown openid is an error (exit 1).',
  ],
  options: {
    after: { type: 'string', value: 'ID', help: 'only entries after this entry id (default 0: from the first)' },
    limit: { type: 'string', value: 'N', help: `at most N entries, 1 to ${LEDGER_PAGE} (default 100)` },
  },
  examples: ['scanauth ledger o6_bmjrPTlm6_2sgVt7hMZOPfL2M', 'scanauth ledger o6_bmjrPTlm6_2sgVt7hMZOPfL2M --after 120 --limit 50 --json'],
  parse(line) {
    const [openid] = expectPositionals('ledger', line.positionals, ['openid'])
    const after = line.values.after as string | undefined
    const limit = line.values.limit as string | undefined
    return {
      openid: identifierArg('ledger', 'openid', openid as string),
      afterId: after === undefined ? 0 : integerArg('ledger', '--after', after, 0, Number.MAX_SAFE_INTEGER),
      limit: limit === undefined ? 100 : integerArg('ledger', '--limit', limit, 1, LEDGER_PAGE),
    }
  },
  async run({ openid, afterId, limit }, context) {
    const output = await context.withAuth(async (auth): Promise<LedgerOutput> => {
      const user = await requireUser(auth, openid)
      const page = await auth.listLedger({ userId: user.id }, { afterId, limit })
      return { user: { id: user.id, openid }, entries: page.entries, nextAfterId: page.nextAfterId }
    })
    const after = afterId > 0 ? ` after #${afterId}` : ''
    const text = [`user #${output.user.id} (${openid}): ${count(output.entries.length, 'entry', 'entries')}${after}`, ...table(output.entries.map(ledgerRow), '  ')]
    if (output.nextAfterId !== null) text.push(`more: scanauth ledger ${openid} --after ${output.nextAfterId}`)
    return { json: output, text }
  },
}
