import { describeStoreContract } from '@scanauth/testkit'
import { MemoryStore } from '@scanauth/core'

describeStoreContract('MemoryStore', () => {
  const store = new MemoryStore()
  return { store, dump: () => store.snapshot(), cleanup: () => {} }
})
