// A session check reads the session and its user in one load (docs/behaviour.md, B-load-2); a store
// written before LoadQuery.userOfSession, which ignores the flag, still works with a second load.
import { describe, expect, it } from 'vitest'
import { createScanAuth, MemoryStore, type Store } from '@scanauth/core'
import { type LoadQuery } from '@scanauth/core/store'
import { RecordingQrProvider } from '@scanauth/testkit'

/** A MemoryStore that records every load, and optionally forgets the flag as an older store would. */
function recordingStore(ignoreFlag: boolean): { store: Store; loads: LoadQuery[] } {
  const inner = new MemoryStore()
  const loads: LoadQuery[] = []
  const store = Object.create(inner) as MemoryStore
  store.load = (query) => {
    loads.push(query)
    if (!ignoreFlag) return inner.load(query)
    const { userOfSession: _ignored, ...older } = query
    return inner.load(older)
  }
  return { store, loads }
}

async function signedIn(ignoreFlag: boolean) {
  const { store, loads } = recordingStore(ignoreFlag)
  const auth = createScanAuth({ store, qr: new RecordingQrProvider() })
  const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
  await auth.handleScan({ sceneStr, openid: 'alice' })
  const status = await auth.getStatus(sceneStr)
  if (status.status !== 'authorized') throw new Error('not authorized')
  loads.length = 0
  return { auth, loads, token: status.sessionToken }
}

describe('session checks', () => {
  it('verifySession and consume read the session and its user in one load', async () => {
    const { auth, loads, token } = await signedIn(false)
    expect(await auth.verifySession(token)).toMatchObject({ userId: 1, deviceId: 'tv' })
    expect(loads).toEqual([{ sessionToken: token, userOfSession: true }])
    loads.length = 0
    expect(await auth.consume({ sessionToken: token, idempotencyKey: 'k' })).toMatchObject({ status: 'ok' })
    expect(loads).toEqual([{ sessionToken: token, userOfSession: true, idempotencyKey: 'k' }])
  })

  it('fall back to a second load when the store ignores userOfSession', async () => {
    const { auth, loads, token } = await signedIn(true)
    expect(await auth.verifySession(token)).toMatchObject({ userId: 1, authorization: { type: 'time' } })
    expect(loads).toEqual([{ sessionToken: token, userOfSession: true }, { userId: 1 }])
    expect(await auth.consume({ sessionToken: token })).toMatchObject({ status: 'ok' })
    expect(await auth.verifySession('unknown')).toBeNull()
  })
})
