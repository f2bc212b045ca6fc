/**
 * Strings beyond ASCII (docs/behaviour.md, D-identifiers, D-well-formed): an input that is not
 * well-formed Unicode (a lone UTF-16 surrogate) is refused before it reaches the store, and every
 * well-formed one is stored and read back exactly as given, through the library and straight from
 * the backend, without normalization.
 */
import { describe, expect, it } from 'vitest'
import type { ScanAuth } from '@scanauth/core'
import type { ContractContext } from '../context'
import { expectScanAuthError, freshSession, only, sceneIn, userIn } from '../steps'

/** Strings no backend can keep as they are: UTF-8 has no encoding for a lone surrogate. */
const ILL_FORMED = ['\ud800', 'a\udfff', '\udfff\ud800', `ok-${'\ud83d'}`] as const

/** Well-formed identifiers beyond ASCII: CJK, emoji (astral, with joiners), combining marks, the length limit. */
const WELL_FORMED = [
  '客厅的电视',
  'テレビ-1',
  '😀',
  '👩‍👩‍👧‍👦 family',
  'cafe\u0301', // "café" with a combining acute accent (NFD)
  'Z\u0351\u0367\u0310a\u036b\u0343l\u0368g\u0302o', // stacked combining marks
  '𝒳'.repeat(64), // 128 UTF-16 units, all astral
  `${'日'.repeat(100)}${'🎉'.repeat(14)}`, // 128 UTF-16 units, BMP and astral mixed
  '🎉'.repeat(128), // 128 characters, the limit (256 UTF-16 units)
] as const

/** The first 128 characters of `text`, never splitting a surrogate pair (which would leave it ill-formed). */
const clip = (text: string) => [...text].slice(0, 128).join('')

/** Every call that takes a string, with `bad` in one of its string inputs; each must refuse it. */
function refusingCalls(auth: ScanAuth, sceneStr: string, token: string, authorizationId: number, bad: string) {
  return {
    'createScene deviceId': () => auth.createScene({ deviceId: bad }),
    'createScene clientAddress': () => auth.createScene({ deviceId: 'device-1', clientAddress: bad }),
    'handleScan openid': () => auth.handleScan({ sceneStr, openid: bad }),
    'grant openid': () => auth.grant({ openid: bad, type: 'time', durationSeconds: 60 }),
    'grant source': () => auth.grant({ openid: 'alice', type: 'points', points: 1, source: bad }),
    'grant idempotencyKey': () => auth.grant({ openid: 'alice', type: 'points', points: 1, idempotencyKey: bad }),
    'consume sessionToken': () => auth.consume({ sessionToken: bad }),
    'consume idempotencyKey': () => auth.consume({ sessionToken: token, idempotencyKey: bad }),
    'getUser openid': () => auth.getUser({ openid: bad }),
    'listLedger openid': () => auth.listLedger({ openid: bad }),
    'revokeSessions openid': () => auth.revokeSessions({ openid: bad }),
    'revokeAuthorization reason': () => auth.revokeAuthorization({ authorizationId, reason: bad }),
  }
}

/** Registers the cases on strings beyond ASCII (D-identifiers, D-well-formed) for the store under test. */
export function unicodeSuite(get: () => ContractContext): void {
  describe('strings beyond ASCII', () => {
    it('refuses a lone surrogate in every input with invalid_request, and stores nothing', async () => {
      const { auth, dump } = get()
      // Something to act on: a user with a session and a pending scene, so only the bad string is wrong.
      const token = await freshSession(auth, dump, 'alice')
      const queued = await auth.grant({ openid: 'alice', type: 'points', points: 3 })
      const { sceneStr } = await auth.createScene({ deviceId: 'device-1' })
      const before = await dump()
      for (const bad of ILL_FORMED) {
        for (const [name, call] of Object.entries(refusingCalls(auth, sceneStr, token, queued.id, bad))) {
          await expectScanAuthError(call(), 'invalid_request', 400).catch((error: unknown) => {
            throw new Error(`${name} with ${JSON.stringify(bad)}: ${String(error)}`)
          })
        }
      }
      expect(await dump()).toEqual(before)
      expect(sceneIn(before, sceneStr).status).toBe('pending')
    })

    it('answers invalid for a scene string with a lone surrogate, and reads and writes nothing', async () => {
      const { auth, dump } = get()
      const { sceneStr } = await auth.createScene({ deviceId: 'device-1' })
      const before = await dump()
      for (const bad of [`${sceneStr}\ud800`, `${sceneStr.slice(0, -1)}\udfff`, '\ud800']) {
        expect(await auth.handleScan({ sceneStr: bad, openid: 'alice' })).toEqual({ result: 'invalid' })
      }
      // An ill-formed scene string with an ill-formed openid: the openid is the caller's mistake.
      await expectScanAuthError(auth.handleScan({ sceneStr: '\ud800', openid: '\ud800' }), 'invalid_request', 400)
      expect(await dump()).toEqual(before)
    })

    it('stores non-ASCII device ids and openids and reads them back identical, through the library and the backend', async () => {
      const { auth, dump } = get()
      for (const [i, text] of WELL_FORMED.entries()) {
        const [deviceId, openid] = [text, text] // each a distinct user
        const { sceneStr } = await auth.createScene({ deviceId })
        const scan = await auth.handleScan({ sceneStr, openid })
        expect(scan.result, JSON.stringify(text)).toBe('authorized')
        const status = await auth.getStatus(sceneStr)
        if (status.status !== 'authorized') throw new Error(`poll of ${JSON.stringify(text)} answered ${status.status}`)

        const session = await auth.verifySession(status.sessionToken)
        expect(session?.deviceId).toBe(deviceId)
        const user = await auth.getUser({ openid })
        expect(user).toMatchObject({ id: scan.userId, openid })
        expect((await auth.getUser({ userId: scan.userId as number }))?.openid).toBe(openid)

        const source = clip(`shop-${text}`)
        const key = clip(`order-${i}-${text}`)
        const granted = await auth.grant({ openid, type: 'points', points: 2, source, idempotencyKey: key })
        expect(granted).toMatchObject({ userId: scan.userId, source })
        expect(await auth.grant({ openid, type: 'points', points: 2, source, idempotencyKey: key })).toEqual(granted)
        const { entries } = await auth.listLedger({ openid })
        expect(entries.every((e) => e.userId === scan.userId)).toBe(true)
        expect(only(entries, (e) => e.kind === 'grant' && e.authorizationId === granted.id)).toMatchObject({ source, idempotencyKey: key })

        const snapshot = await dump()
        expect(sceneIn(snapshot, sceneStr).deviceId).toBe(deviceId)
        expect(userIn(snapshot, openid).id).toBe(scan.userId)
        expect(only(snapshot.sessions, (s) => s.token === status.sessionToken).deviceId).toBe(deviceId)
        expect(only(snapshot.authorizations, (a) => a.id === granted.id).source).toBe(source)
        expect(only(snapshot.idempotency, (r) => r.key === key).authorizationId).toBe(granted.id)
      }
      expect((await dump()).users).toHaveLength(WELL_FORMED.length)
    })

    it('keeps a revocation reason beyond ASCII as given', async () => {
      const { auth, dump } = get()
      const granted = await auth.grant({ openid: '用户', type: 'points', points: 1 })
      const reason = '退款 refund 💸 e\u0301'
      await auth.revokeAuthorization({ authorizationId: granted.id, reason })
      const { entries } = await auth.listLedger({ openid: '用户' })
      expect(only(entries, (e) => e.kind === 'revoke').reason).toBe(reason)
      expect(only((await dump()).ledger, (e) => e.kind === 'revoke').reason).toBe(reason)
    })

    it('treats two openids that differ only in normalization (NFC, NFD) as two users', async () => {
      const { auth, dump } = get()
      const nfc = 'caf\u00e9-\uac00' // é and 가 precomposed
      const nfd = nfc.normalize('NFD') // e + U+0301, ᄀ + ᅡ
      expect(nfd).not.toBe(nfc)
      const a = await auth.grant({ openid: nfc, type: 'points', points: 1 })
      const b = await auth.grant({ openid: nfd, type: 'points', points: 2 })
      expect(a.userId).not.toBe(b.userId)
      expect(await auth.getUser({ openid: nfc })).toMatchObject({ id: a.userId, openid: nfc, current: { remainingPoints: 1 } })
      expect(await auth.getUser({ openid: nfd })).toMatchObject({ id: b.userId, openid: nfd, current: { remainingPoints: 2 } })
      const snapshot = await dump()
      expect(snapshot.users.map((u) => u.openid).sort()).toEqual([nfc, nfd].sort())
      expect(userIn(snapshot, nfc).id).toBe(a.userId)
      expect(userIn(snapshot, nfd).id).toBe(b.userId)
    })

    it('counts the 128-character limit in characters: 129 are refused, astral ones included', async () => {
      const { auth, dump } = get()
      for (const long of ['a'.repeat(129), '🎉'.repeat(129), `${'日'.repeat(128)}😀`]) {
        await expectScanAuthError(auth.createScene({ deviceId: long }), 'invalid_request', 400)
        await expectScanAuthError(auth.grant({ openid: long, type: 'points', points: 1 }), 'invalid_request', 400)
      }
      expect((await dump()).users).toHaveLength(0)
    })
  })
}
