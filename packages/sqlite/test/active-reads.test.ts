// SqliteStore's reminders' read (Store.listActiveAuthorizations) seen in the file: migration 11 adds
// its two partial indexes over the authorizations a version 10 file already holds, which then hold
// exactly the active ones of their type and follow every commit; a tie of many authorizations ending
// at one millisecond pages exactly (the two ranges of `active-reads.ts`). The statements' plans:
// query-plans.test.ts; the Store contract's cases: testkit.
import type Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import type { AuthorizationRecord } from '@scanauth/core'
import { MIGRATIONS, SCHEMA_VERSION, VERSION_TABLE } from '@scanauth/sqlite'
import { DAY, service, useTempFile } from './support/fixture'
import { writeSchemaUpTo } from './support/old-schema'

const fixture = useTempFile()
const T0 = Date.parse('2026-01-01T00:00:00.000Z')

/** Inserts a user and its authorizations with raw SQL: `[type, status, endAt, remainingPoints]` each. */
function insertUser(db: Database.Database, openid: string, authorizations: Array<[string, string, number | null, number]>): void {
  const { lastInsertRowid } = db
    .prepare(`INSERT INTO scanauth_users (openid, created_at, last_seen_at, has_claimed_free, version) VALUES (?, ?, ?, 0, 1)`)
    .run(openid, T0, T0)
  const insert = db.prepare(`INSERT INTO scanauth_authorizations (user_id, type, status, start_at, end_at, remaining_points, total_points, source, created_at, updated_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, 'purchase', ?, ?)`)
  for (const [type, status, endAt, points] of authorizations) insert.run(lastInsertRowid, type, status, T0, endAt, points, points, T0, T0)
}

/** The ids in a partial index, in its order. */
function indexed(db: Database.Database, index: string, where: string, order: string): number[] {
  return db.prepare(`SELECT id FROM scanauth_authorizations INDEXED BY ${index} WHERE ${where} ORDER BY ${order}`).pluck().all() as number[]
}

const ACTIVE_TIME = ['scanauth_authorizations_active_time', `status = 'active' AND type = 'time'`, 'end_at, id'] as const
const ACTIVE_POINTS = ['scanauth_authorizations_active_points', `status = 'active' AND type = 'points'`, 'remaining_points, id'] as const

describe('SqliteStore: the reminders read', () => {
  it('upgrades a version 10 file to 11: the two partial indexes built over the authorizations there, holding only the active ones of their type', async () => {
    const db = fixture.rawDb()
    writeSchemaUpTo(db, 10)
    insertUser(db, 'a', [['time', 'expired', T0 + DAY, 0], ['time', 'active', T0 + 3 * DAY, 0]]) // ids 1, 2
    insertUser(db, 'b', [['points', 'active', null, 2], ['time', 'pending', T0 + 9 * DAY, 0]]) // ids 3, 4
    insertUser(db, 'c', [['points', 'exhausted', null, 0], ['points', 'revoked', null, 1], ['time', 'active', T0 + 2 * DAY, 0]]) // ids 5, 6, 7
    insertUser(db, 'd', [['points', 'active', null, 40]]) // id 8

    const store = fixture.openStore()
    expect(db.prepare(`SELECT MAX(version) FROM ${VERSION_TABLE}`).pluck().get()).toBe(SCHEMA_VERSION)
    expect(MIGRATIONS.find((m) => m.version === 11)?.name).toBe('active authorizations by end and by points left, for reminders')
    expect(indexed(db, ...ACTIVE_TIME)).toEqual([7, 2])
    expect(indexed(db, ...ACTIVE_POINTS)).toEqual([3, 8])
    const time = await store.listActiveAuthorizations({ type: 'time', endFrom: T0, endBefore: T0 + 10 * DAY, limit: 10 })
    expect(time.map((a) => [a.id, a.endAt])).toEqual([[7, T0 + 2 * DAY], [2, T0 + 3 * DAY]])
    expect(time[0]).toStrictEqual((await store.load({ authorizationId: 7 })).authorization)
    expect((await store.listActiveAuthorizations({ type: 'points', pointsBelow: 5, limit: 10 })).map((a) => a.id)).toEqual([3])

    // Then the commits keep them: user a's active one expires and b's queued one activates.
    const { auth, clock } = service(store)
    clock.set(T0 + 4 * DAY)
    await auth.grant({ userId: 1, type: 'points', points: 1 }) // a: expires 2, activates the new points one (id 9)
    await auth.revokeAuthorization({ authorizationId: 3 }) // b: revokes 3, activates 4
    expect(indexed(db, ...ACTIVE_TIME)).toEqual([7, 4])
    expect(indexed(db, ...ACTIVE_POINTS)).toEqual([9, 8])
  })

  it('pages exactly through a tie of many authorizations that end at one millisecond', async () => {
    const store = fixture.openStore()
    const db = store.database
    db.transaction(() => {
      for (let i = 0; i < 300; i++) insertUser(db, `tie-${i}`, [['time', 'active', T0 + DAY, 0]])
      insertUser(db, 'before', [['time', 'active', T0 + DAY - 1, 0]])
      insertUser(db, 'after', [['time', 'active', T0 + DAY + 1, 0]])
    })()
    const query = { type: 'time', endFrom: T0, endBefore: T0 + 2 * DAY } as const
    const all = await store.listActiveAuthorizations({ ...query, limit: 1000 })
    expect(all.map((a) => a.endAt)).toEqual([T0 + DAY - 1, ...Array.from({ length: 300 }, () => T0 + DAY), T0 + DAY + 1])
    const paged: AuthorizationRecord[] = []
    let after: { endAt: number; id: number } | undefined
    for (;;) {
      const page = await store.listActiveAuthorizations(after === undefined ? { ...query, limit: 7 } : { ...query, after, limit: 7 })
      paged.push(...page)
      const last = page[page.length - 1]
      if (page.length < 7 || last === undefined) break
      after = { endAt: last.endAt as number, id: last.id }
    }
    expect(paged).toStrictEqual(all)
  })
})
