/**
 * Confirm on the phone and the poll secret on Redis (docs/behaviour.md B-confirm-1…12,
 * B-secret-1…4), checked by reading Redis directly: the three scene fields `requestedFrom`,
 * `pollSecretHash` and `confirmation` round-trip exactly (null included) in the scene's extended
 * form, a scene stored without them (the compact form, all 0.1.0 wrote) reads back with them null,
 * and `load({ confirmTicketHash })` finds the scene through the `<p>ct:` index in one round trip,
 * the index key expiring exactly when its scene does.
 */
import { createHash } from 'node:crypto'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Redis } from 'ioredis'
import { createScanAuth, type SceneConfirmation, type SceneRecord, type SceneStatus } from '@scanauth/core'
import { type ChangeSet } from '@scanauth/core/store'
import { ManualClock, RecordingQrProvider } from '@scanauth/testkit'
import { RedisStore } from '../src/index'
import { decodeScene, encodeScene } from '../src/codec-scenes'
import { connect, countCommands, deleteKeysUnder, testPrefix } from './support/redis'

const T0 = Date.parse('2026-01-01T00:00:00.000Z')
const SCENE_MS = 300_000
const SCENE = `pc_${'0'.repeat(31)}1`
/** Digests as core makes them: SHA-256, base64url (43 characters). */
const digest = (secret: string) => createHash('sha256').update(secret, 'utf8').digest('base64url')
const TICKET = digest('ticket-1')

const pending: Omit<SceneRecord, 'id'> = {
  sceneStr: SCENE,
  deviceId: 'tv|1',
  status: 'pending',
  userId: null,
  createdAt: T0,
  expiresAt: T0 + SCENE_MS,
  authorizedAt: null,
  requestedFrom: '203.0.113.*',
  pollSecretHash: digest('poll'),
  confirmation: null,
  version: 1,
}

const confirmation: SceneConfirmation = { scannedBy: 'alice|cn', scannedAt: T0 + 1000, ticketHash: TICKET, csrfHash: null }

let client: Redis
let prefix: string
let store: RedisStore

beforeEach(() => {
  client = connect()
  prefix = testPrefix()
  store = new RedisStore({ client, keyPrefix: prefix })
})

afterEach(async () => {
  await deleteKeysUnder(client, prefix)
  await client.quit()
})

async function commitOk(changes: ChangeSet, on: RedisStore = store) {
  const result = await on.commit(changes)
  if (!result.ok) throw new Error(`commit refused: ${result.conflict}`)
  return result.ids
}

/** The pending scene inserted, then moved to `scanned` with {@link confirmation} (a KEEPTTL update, as core's scan does). */
async function scannedScene(on: RedisStore = store, base: Omit<SceneRecord, 'id'> = pending): Promise<SceneRecord> {
  const { sceneId } = await commitOk({ scene: { op: 'insert', scene: base } }, on)
  const scanned: SceneRecord = { ...base, id: sceneId as number, status: 'scanned', confirmation, version: 2 }
  await commitOk({ scene: { op: 'update', scene: scanned, expectedVersion: 1 } }, on)
  return scanned
}

describe('scene codec', () => {
  const base: SceneRecord = { ...pending, id: 7, requestedFrom: null, pollSecretHash: null }

  it('writes the compact form, byte for byte as before, when the three fields are null', () => {
    expect(encodeScene(base)).toBe(`1|7||p|${T0}|${T0 + SCENE_MS}||tv|1`)
  })

  it('round-trips every field in the extended form, whatever the texts hold', () => {
    const texts = ['', '|', ',', 'a|b,c', '2001:db8:1::*', '设备 😀', '+', '12']
    const variants: SceneRecord[] = []
    const statuses: SceneStatus[] = ['pending', 'scanned', 'authorized', 'expired', 'denied']
    for (const status of statuses) {
      for (const text of texts) {
        variants.push({ ...base, status, requestedFrom: text })
        variants.push({ ...base, status, pollSecretHash: text, deviceId: text })
        variants.push({ ...base, status, confirmation: { scannedBy: text, scannedAt: T0 + 0.5, ticketHash: text, csrfHash: null } })
        variants.push({ ...base, status, requestedFrom: text, confirmation: { ...confirmation, csrfHash: text }, deviceId: `${text}|d` })
        variants.push({ ...base, status, userId: 3, authorizedAt: T0, requestedFrom: '', pollSecretHash: '', confirmation: { ...confirmation, scannedBy: '', ticketHash: text } })
      }
    }
    for (const scene of variants) {
      const value = encodeScene(scene)
      expect(value.split('|')[3], value).toMatch(/^[pcaed]\+$/)
      expect(decodeScene(scene.sceneStr, value), value).toEqual(scene)
    }
  })

  it('reads a compact value with the three fields null, and refuses extended values it did not write', () => {
    expect(decodeScene(SCENE, `3|7|2|a|${T0}|${T0 + SCENE_MS}|${T0}|tv|1`)).toEqual({
      ...base, status: 'authorized', userId: 2, authorizedAt: T0, version: 3, requestedFrom: null, pollSecretHash: null, confirmation: null,
    })
    const head = `1|7||c+|${T0}|${T0 + SCENE_MS}|`
    for (const bad of [
      `${head}|${T0}|1,,,,|xdev`, // too few fields
      `${head}|${T0}|1,,,|x|dev`, // four lengths
      `${head}|${T0}|9,,,,|x|dev`, // a length past the texts
      `${head}|${T0}|-1,,,,|dev`, // a negative length
      `${head}||,,1,1,|ab|dev`, // a confirmation's texts without its scannedAt
      `${head}|${T0}|,,,1,|a|dev`, // a confirmation without its scannedBy
      `${head}|x|,,1,1,|ab|dev`, // a scannedAt that is no number
      `1|7||c*|${T0}|${T0 + SCENE_MS}||dev`, // an unknown status
    ]) {
      expect(() => decodeScene(SCENE, bad), bad).toThrow(expect.objectContaining({ code: 'malformed_record' }))
    }
  })
})

describe('RedisStore with confirmations', () => {
  it('round-trips a scene with a confirmation, and a stored compact scene reads back with the new fields null', async () => {
    const scanned = await scannedScene()
    expect((await store.load({ sceneStr: SCENE })).scene).toEqual(scanned)
    // version|id|userId|status+|createdAt|expiresAt|authorizedAt|scannedAt|lengths|texts (codec-scenes.ts)
    expect(await client.get(store.keys.scene(SCENE))).toBe(
      `2|1||c+|${T0}|${T0 + SCENE_MS}||${T0 + 1000}|11,43,8,43,|203.0.113.*${digest('poll')}alice|cn${TICKET}tv|1`,
    )
    const withCsrf: SceneRecord = { ...scanned, confirmation: { ...confirmation, csrfHash: digest('csrf') }, version: 3 }
    await commitOk({ scene: { op: 'update', scene: withCsrf, expectedVersion: 2 } })
    expect((await store.load({ confirmTicketHash: TICKET })).scene).toEqual(withCsrf)

    // A scene as 0.1.0 stored it: no requestedFrom, pollSecretHash or confirmation.
    const old = `pc_${'0'.repeat(31)}2`
    await client.set(store.keys.scene(old), `1|9||p|${T0}|${T0 + SCENE_MS}||tv`)
    expect((await store.load({ sceneStr: old })).scene).toEqual({
      ...pending, id: 9, sceneStr: old, deviceId: 'tv', requestedFrom: null, pollSecretHash: null, confirmation: null,
    })
  })

  it('finds a scene by its confirm ticket in one round trip, and nothing for an unknown ticket', async () => {
    const scanned = await scannedScene()
    expect(await client.get(store.keys.confirmTicket(TICKET))).toBe(SCENE)
    const counter = countCommands(client)
    expect(await store.load({ confirmTicketHash: TICKET })).toMatchObject({ scene: scanned, user: null, session: null })
    expect(await store.load({ confirmTicketHash: digest('unknown') })).toMatchObject({ scene: null })
    // With other parts of the same load, still one script run.
    expect(await store.load({ confirmTicketHash: TICKET, openid: 'nobody', idempotencyKey: 'k' })).toMatchObject({ scene: scanned, user: null, idempotency: null })
    expect(counter.byName()).toEqual({ evalsha: 3 })
    await expect(store.load({ sceneStr: SCENE, confirmTicketHash: TICKET })).rejects.toMatchObject({ code: 'invalid_query' })
  })

  it('refuses a confirmation with an empty ticketHash before sending anything', async () => {
    const counter = countCommands(client)
    const scene = { ...pending, status: 'scanned' as const, confirmation: { ...confirmation, ticketHash: '' } }
    await expect(store.commit({ scene: { op: 'insert', scene } })).rejects.toMatchObject({ code: 'invalid_change_set' })
    expect(counter.total()).toBe(0)
  })

  it('a decided scene is still found by its ticket (B-confirm-4: "already used"), denied or authorized', async () => {
    const scanned = await scannedScene()
    const denied: SceneRecord = { ...scanned, status: 'denied', version: 3 }
    await commitOk({ scene: { op: 'update', scene: denied, expectedVersion: 2 } })
    expect((await store.load({ confirmTicketHash: TICKET })).scene).toEqual(denied)
  })

  it('a scene rewritten without its confirmation is no longer found by the old ticket', async () => {
    const scanned = await scannedScene()
    await commitOk({ scene: { op: 'update', scene: { ...scanned, confirmation: null, version: 3 }, expectedVersion: 2 } })
    expect((await store.load({ confirmTicketHash: TICKET })).scene).toBeNull()
  })

  it('gives the index key the expiry its scene has, and moves it with the scene', async () => {
    await scannedScene()
    const k = store.keys
    const sceneAt = await client.pexpiretime(k.scene(SCENE))
    expect(sceneAt).toBeGreaterThan(0)
    expect(await client.pexpiretime(k.confirmTicket(TICKET))).toBe(sceneAt)

    // The scanner confirms: the scene is written with its session, so its deadline moves to the
    // session's (D-retention), and the ticket's index with it.
    const scene = (await store.load({ sceneStr: SCENE })).scene as SceneRecord
    const user = await commitOk({ user: { op: 'insert', user: { openid: 'alice|cn', createdAt: T0, lastSeenAt: T0, hasClaimedFree: false, version: 1 }, insertAuthorizations: [] } })
    const authorized: SceneRecord = { ...scene, status: 'authorized', userId: user.userId as number, authorizedAt: T0 + 2000, version: 3 }
    const session = { token: 'tok', userId: user.userId as number, deviceId: 'tv|1', sceneId: scene.id, createdAt: T0 + 2000, expiresAt: T0 + 2000 + 7 * 24 * 3600_000 }
    await commitOk({ scene: { op: 'update', scene: authorized, expectedVersion: 2 }, session })
    const movedAt = await client.pexpiretime(k.scene(SCENE))
    expect(movedAt).toBeGreaterThan(sceneAt + 24 * 3600_000)
    expect(await client.pexpiretime(k.confirmTicket(TICKET))).toBe(movedAt)
    expect((await store.load({ confirmTicketHash: TICKET })).scene).toEqual(authorized)
  })

  it('the index key expires with the scene', async () => {
    // No grace and a scene already over: the shortest TTL (MIN_TTL_MS, 1 s) on both keys.
    const tight = new RedisStore({ client, keyPrefix: prefix, expiryGraceSeconds: 0 })
    await scannedScene(tight, { ...pending, expiresAt: T0 })
    expect(await client.pttl(tight.keys.confirmTicket(TICKET))).toBeGreaterThan(0)
    expect((await tight.load({ confirmTicketHash: TICKET })).scene).not.toBeNull()
    await new Promise((resolve) => setTimeout(resolve, 1100))
    expect(await client.exists(tight.keys.scene(SCENE), tight.keys.confirmTicket(TICKET))).toBe(0)
    expect((await tight.load({ confirmTicketHash: TICKET })).scene).toBeNull()
  })

  it("files core's scan in confirm: 'link' mode under its ticket", async () => {
    const clock = new ManualClock(T0)
    const auth = createScanAuth({
      store,
      qr: new RecordingQrProvider(),
      now: clock.now,
      confirm: 'link',
      confirmation: { url: 'https://example.test/auth/confirm' },
    })
    const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
    const scan = await auth.handleScan({ sceneStr, openid: 'alice' })
    if (scan.result !== 'scanned') throw new Error(`unexpected scan result ${scan.result}`)
    const { scene } = await store.load({ confirmTicketHash: digest(scan.ticket) })
    expect(scene).toMatchObject({ sceneStr, status: 'scanned', confirmation: { scannedBy: 'alice', ticketHash: digest(scan.ticket), csrfHash: null } })
    expect(await auth.getStatus(sceneStr)).toEqual({ status: 'scanned' })
  })
})
