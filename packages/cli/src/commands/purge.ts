/**
 * `scanauth purge`: the store's `purgeExpired` with the default options at the current time.
 *
 * @module
 */
import type { PurgeResult } from '@scanauth/core'
import { expectPositionals } from '../args'
import type { Command } from '../command'
import { count } from '../format'
import { storeMethod } from '../opened-store'

export const purgeCommand: Command<Record<string, never>> = {
  name: 'purge',
  usage: 'purge',
  summary: 'delete expired scenes, sessions and counters, and closed orders past their deadline, now',
  help: [
    "Runs the store's purgeExpired at the current time with the default options (no retention, batches of",
    '500): deletes scenes once they and their latest session have expired, expired sessions and expired',
    'rate-limit counters, and closed orders that never took money once past their payment deadline, in',
    'short transactions that live servers hardly notice. Users, authorizations, ledger entries,',
    'idempotency keys and open, paid and refunded orders are never deleted. On Redis, scenes, sessions and',
    'counters expire by their TTLs: only closed orders are deleted. Servers of the examples purge every',
    'hour by themselves.',
  ],
  options: {},
  examples: ['scanauth purge', 'scanauth purge --postgres postgres://app@db/app --json'],
  parse(line) {
    expectPositionals('purge', line.positionals, [])
    return {}
  },
  async run(_input, context) {
    const result = await context.withAuth(async (_auth, opened): Promise<PurgeResult> => {
      // Every scanauth store has purgeExpired (optional only for stores of one's own).
      return storeMethod(opened.store, 'purgeExpired', opened.label, 'purge')({ now: context.now() })
    })
    const batches = count(result.batches, 'batch', 'batches')
    const orders = count(result.orders, 'closed order')
    const text =
      context.config.kind === 'redis'
        ? `purged ${orders} in ${batches} (Redis expires scenes, sessions and counters by itself)`
        : `purged ${count(result.scenes, 'scene')}, ${count(result.sessions, 'session')}, ${count(result.counters, 'counter')} and ${orders} in ${batches}`
    return { json: result, text: [text] }
  },
}
