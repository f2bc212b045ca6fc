// The Store contract suite of @scanauth/testkit against SqliteStore: a real file in a fresh folder
// per test; peers are further SqliteStores (their own connections) on the same file.
import { describeStoreContract } from '@scanauth/testkit'
import { SqliteStore } from '@scanauth/sqlite'
import { dumpFile, tempDb } from './support/files'

describeStoreContract('SqliteStore', async () => {
  const temp = await tempDb()
  const store = new SqliteStore({ filename: temp.filename })
  const peers: SqliteStore[] = []
  return {
    store,
    openPeer: () => {
      const peer = new SqliteStore({ filename: temp.filename })
      peers.push(peer)
      return peer
    },
    dump: () => dumpFile(temp.filename),
    cleanup: async () => {
      for (const peer of peers) await peer.close()
      await store.close()
      await temp.remove()
    },
  }
})
