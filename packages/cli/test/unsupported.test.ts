/**
 * A store without an optional method a command reads with (a store of one's own): the command is
 * refused with one line naming the store and the method, exit status 1, and nothing is written. The
 * commands run in process over a MemoryStore whose method is hidden; every scanauth store has them
 * all, so the CLI's own stores never meet this (sqlite, redis and postgres tests).
 */
import { describe, expect, it } from 'vitest'
import { createScanAuth, MemoryStore, type Store } from '@scanauth/core'
import { RecordingQrProvider } from '@scanauth/testkit'
import { authOver, type Context } from '../src/command'
import type { OpenedStore } from '../src/opened-store'
import { ScanAuthCliError } from '../src/index'
import { COMMANDS } from '../src/run'

const T0 = Date.parse('2026-01-01T00:00:00.000Z')

/** `memory` with its method `hidden` left out, as a store of one's own that never wrote it. */
function without(memory: MemoryStore, hidden: keyof Store): Store {
  return new Proxy(memory, { get: (target, name, receiver) => (name === hidden ? undefined : Reflect.get(target, name, receiver)) }) as Store
}

/** The reminders' variables of a dry run (no Official Account needed: nothing is sent). */
const REMINDER_ENV = { SCANAUTH_REMINDERS: '3,1' }

/** A context whose store is `store` (the command's `withAuth` gets it as an opened store, and the CLI's scanauth instance over it). */
function contextOver(store: Store): Context {
  const opened: OpenedStore = { kind: 'sqlite', label: 'sqlite /srv/own.sqlite', store, close: async () => undefined }
  return {
    config: { kind: 'sqlite', filename: '/srv/own.sqlite', from: '--sqlite' },
    now: () => T0,
    env: REMINDER_ENV,
    withAuth: async (work, options) => work(authOver(opened, () => T0, options), opened),
  }
}

const command = (name: string) => COMMANDS.find((c) => c.name === name) as (typeof COMMANDS)[number]

describe('a store without an optional method the command needs', () => {
  it.each([
    ['user', 'listLiveSessions', "cannot list a user's live sessions"],
    ['orders', 'listOpenOrders', 'cannot list open orders'],
    ['orders', 'loadOrder', 'cannot read orders'],
    ['purge', 'purgeExpired', 'cannot purge'],
    ['reminders', 'listActiveAuthorizations', 'cannot find who is due for a reminder'],
  ] as const)('%s without %s: refused in one line (unsupported, exit 1), nothing written', async (name, hidden, what) => {
    const memory = new MemoryStore()
    await createScanAuth({ store: memory, qr: new RecordingQrProvider(), now: () => T0 }).grant({ openid: 'o6_dave', type: 'points', points: 3 })
    const before = memory.snapshot()
    const input = name === 'purge' ? {} : name === 'reminders' ? { dryRun: true } : { openid: 'o6_dave' }
    const failure = await command(name)
      .run(input, contextOver(without(memory, hidden)))
      .then(() => null, (error: unknown) => error)
    expect(failure).toBeInstanceOf(ScanAuthCliError)
    expect(failure).toMatchObject({ code: 'unsupported', exitStatus: 1 })
    const message = (failure as Error).message
    expect(message).toBe(
      `sqlite /srv/own.sqlite ${what}: its store has no ${hidden}, an optional method of the Store contract (every scanauth store has it); nothing was changed`,
    )
    expect(message).not.toContain('\n')
    expect(memory.snapshot()).toEqual(before)
  })

  it('the same commands work over the MemoryStore that has them all', async () => {
    const memory = new MemoryStore()
    await createScanAuth({ store: memory, qr: new RecordingQrProvider(), now: () => T0 }).grant({ openid: 'o6_dave', type: 'points', points: 3 })
    const user = await command('user').run({ openid: 'o6_dave' }, contextOver(memory))
    expect(user.json).toMatchObject({ sessions: { live: 0, latest: [] }, ledger: { total: 2 } })
    expect((await command('orders').run({ openid: 'o6_dave' }, contextOver(memory))).json).toMatchObject({ orders: [], unmatchedGrants: [] })
    expect((await command('purge').run({}, contextOver(memory))).json).toMatchObject({ orders: 0, more: false })
    expect((await command('reminders').run({ dryRun: true }, contextOver(memory))).json).toMatchObject({ dryRun: true, checked: 0, due: 0, planned: [] })
  })
})
