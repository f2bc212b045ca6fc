// Change sets that break the Store contract (a bug in the caller, never a race): the commit
// function raises SQLSTATE SA422, the store throws PostgresStoreError `invalid_change_set`, and the
// whole statement rolls back, so nothing of it is applied. Read back with plain SQL.
import { afterAll, afterEach, beforeEach, expect, it } from 'vitest'
import { type UserRecord } from '@scanauth/core'
import { NEW_USER, type NewAuthorization, type NewLedgerEntry } from '@scanauth/core/store'
import { PostgresStore, PostgresStoreError } from '@scanauth/postgres'
import { dropSchema, dumpSchema, freshSchemaName, openPool } from './support/database'

const pool = openPool(2)
afterAll(() => pool.end())

const T0 = Date.parse('2026-01-01T00:00:00Z')
const newUser = (openid: string): Omit<UserRecord, 'id'> => ({ openid, createdAt: T0, lastSeenAt: T0, hasClaimedFree: false, version: 1 })
const points = (n: number): NewAuthorization => ({
  type: 'points', status: 'pending', startAt: T0, endAt: null, remainingPoints: n, totalPoints: n, source: 'purchase', createdAt: T0, updatedAt: T0,
})
const grantEntry = (authorizationId: NewLedgerEntry['authorizationId'], n: number): NewLedgerEntry => ({
  userId: NEW_USER, authorizationId, kind: 'grant', points: n, remainingPoints: n, at: T0, source: 'purchase', idempotencyKey: null, reason: null,
})

let schema = ''
let store: PostgresStore

beforeEach(async () => {
  schema = freshSchemaName()
  store = new PostgresStore({ pool, schema })
  await store.migrate()
  // Two users; the first owns one points authorization (id 1).
  await store.commit({ user: { op: 'insert', user: newUser('o1'), insertAuthorizations: [points(3)] } })
  await store.commit({ user: { op: 'insert', user: newUser('o2'), insertAuthorizations: [] } })
})

afterEach(async () => {
  await store.close()
  await dropSchema(pool, schema)
})

/** Commits `changes`, expects invalid_change_set with `message`, and that the tables did not change. */
async function refused(changes: Parameters<PostgresStore['commit']>[0], message: RegExp): Promise<void> {
  const before = await dumpSchema(pool, schema)
  const error = await store.commit(changes).then(
    () => null,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(PostgresStoreError)
  expect(error).toMatchObject({ code: 'invalid_change_set', message: expect.stringMatching(message) })
  expect(await dumpSchema(pool, schema)).toEqual(before)
}

it('refuses an update of another user’s authorization', async () => {
  const stored = (await store.load({ userId: 1 })).user?.authorizations[0]
  expect(stored).toBeDefined()
  await refused(
    {
      user: {
        op: 'update',
        user: { ...newUser('o2'), id: 2, version: 2 },
        expectedVersion: 1,
        insertAuthorizations: [],
        updateAuthorizations: [{ ...(stored as NonNullable<typeof stored>), userId: 2, remainingPoints: 0 }],
      },
    },
    /authorization 1 is not an authorization of user 2/,
  )
})

it('refuses NEW_USER in a change set that inserts no user', async () => {
  await refused({ session: { token: 't', userId: NEW_USER, deviceId: 'd', sceneId: 1, createdAt: T0, expiresAt: T0 + 1 } }, /inserts no user/)
  await refused({ ledger: [grantEntry(1, 5)] }, /inserts no user/)
})

it('refuses a reference to an authorization the change set does not insert', async () => {
  await refused(
    { user: { op: 'insert', user: newUser('o3'), insertAuthorizations: [points(5)] }, ledger: [grantEntry({ inserted: 1 }, 5)] },
    /inserted authorization 1 but inserts 1/,
  )
})
