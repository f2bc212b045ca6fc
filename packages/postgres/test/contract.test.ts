// The Store contract suite of @scanauth/testkit against PostgresStore on the real server: a fresh
// schema per test (dropped afterwards); peers are further PostgresStores on pools of their own.
import { afterAll } from 'vitest'
import { describeStoreContract } from '@scanauth/testkit'
import { PostgresStore } from '@scanauth/postgres'
import { dropSchema, dumpSchema, freshSchemaName, openPool } from './support/database'

// One pool for the stores under test (and the dumps), shared by every test of this file.
const pool = openPool(20)
afterAll(() => pool.end())

describeStoreContract('PostgresStore', async () => {
  const schema = freshSchemaName()
  const store = new PostgresStore({ pool, schema })
  await store.migrate()
  const peers: Array<{ store: PostgresStore; pool: ReturnType<typeof openPool> }> = []
  return {
    store,
    openPeer: async () => {
      const peerPool = openPool(5)
      const peer = new PostgresStore({ pool: peerPool, schema })
      await peer.migrate()
      peers.push({ store: peer, pool: peerPool })
      return peer
    },
    dump: () => dumpSchema(pool, schema),
    cleanup: async () => {
      for (const peer of peers) {
        await peer.store.close()
        await peer.pool.end()
      }
      await store.close()
      await dropSchema(pool, schema)
    },
  }
})
