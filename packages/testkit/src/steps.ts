/**
 * Small steps the suites share: create and scan a scene, read one record from a snapshot.
 */
import { expect } from 'vitest'
import type { ScanAuth } from '@scanauth/core'
import type { StoreSnapshot } from './harness'

/** Creates a scene and returns its scene_str. */
export async function newSceneStr(auth: ScanAuth, deviceId = 'device-1'): Promise<string> {
  return (await auth.createScene({ deviceId })).sceneStr
}

/** Creates a scene and scans it with `openid`; returns the scene_str and the scan result. */
export async function scanNewScene(auth: ScanAuth, openid: string, deviceId = 'device-1') {
  const sceneStr = await newSceneStr(auth, deviceId)
  const scan = await auth.handleScan({ sceneStr, openid })
  return { sceneStr, scan }
}

/** The one record of `list` matching `pick`; fails the test when there is not exactly one. */
export function only<T>(list: T[], pick: (item: T) => boolean = () => true): T {
  const found = list.filter(pick)
  expect(found, 'exactly one matching record').toHaveLength(1)
  return found[0] as T
}

/** A snapshot's scene by scene_str. */
export function sceneIn(snapshot: StoreSnapshot, sceneStr: string) {
  return only(snapshot.scenes, (s) => s.sceneStr === sceneStr)
}

/** A snapshot's user by openid. */
export function userIn(snapshot: StoreSnapshot, openid: string) {
  return only(snapshot.users, (u) => u.openid === openid)
}

/** A snapshot's authorizations of one user, by id. */
export function authorizationsOf(snapshot: StoreSnapshot, userId: number) {
  return snapshot.authorizations.filter((a) => a.userId === userId).sort((a, b) => a.id - b.id)
}

/** Rejects with a ScanAuthError of this code. */
export async function expectScanAuthError(promise: Promise<unknown>, code: string, status: number) {
  await expect(promise).rejects.toMatchObject({ name: 'ScanAuthError', code, status })
}

/** Scans a new scene with `openid` and returns the token of the session that scan created. */
export async function freshSession(auth: ScanAuth, dump: () => Promise<StoreSnapshot>, openid: string): Promise<string> {
  const { sceneStr } = await scanNewScene(auth, openid)
  const snapshot = await dump()
  return only(snapshot.sessions, (s) => s.sceneId === sceneIn(snapshot, sceneStr).id).token
}
