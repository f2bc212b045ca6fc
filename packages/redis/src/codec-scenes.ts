/**
 * Scenes ⇄ Redis values. A scene is one packed string (read with one GET on a device's poll), in
 * one of two forms:
 *
 * | form     | value                                                                                    |
 * |----------|------------------------------------------------------------------------------------------|
 * | compact  | `version\|id\|userId\|status\|createdAt\|expiresAt\|authorizedAt\|deviceId`               |
 * | extended | `version\|id\|userId\|status+\|createdAt\|expiresAt\|authorizedAt\|scannedAt\|lengths\|texts` |
 *
 * The compact form is the one 0.1.0 wrote, and still the one written when `requestedFrom`,
 * `pollSecretHash` and `confirmation` are all null, i.e. always outside the opt-in modes
 * (`confirm: 'link'`, `requirePollSecret`): the hot decode stays as lean as it was, and a scene
 * stored before these fields existed reads back with the three null.
 *
 * The extended form carries them (docs/behaviour.md B-confirm-1, B-confirm-5, B-secret-1). Its
 * status field is the status letter followed by `+`: a compact value's status is one letter, so the
 * `+` tells the forms apart whatever the free text holds, and an older store that meets an
 * extended value reports `malformed_record` instead of misreading it. Then:
 * - `scannedAt`: the confirmation's, or empty when `confirmation` is null;
 * - `lengths`: the lengths (UTF-16 code units, as JavaScript counts them) of `requestedFrom`,
 *   `pollSecretHash`, `confirmation.scannedBy`, `confirmation.ticketHash` and
 *   `confirmation.csrfHash`, comma-separated, each empty for null;
 * - `texts`: those strings one after the other, then `deviceId` (the rest of the value).
 * Lengths instead of separators because four of the five may hold any character (an openid, a
 * masked address and a device id are the caller's text); every string, `''` and `null` included,
 * round-trips exactly.
 *
 * The version comes first because the commit script compares it (it reads the field before the
 * first `|`); the script also writes the id and the user id, so those come before the part built
 * here (the "tail"). Nothing in Lua reads the tail: the confirm-ticket index
 * (`<p>ct:<ticketHash>`, `keys.ts`) gets the ticket digest as an argument of its own.
 *
 * @module
 */
import type { SceneConfirmation, SceneRecord, SceneStatus } from '@scanauth/core'
import { malformed, num, optNum, SEP, splitFields } from './codec'

const SCENE_STATUS = { pending: 'p', scanned: 'c', authorized: 'a', expired: 'e', denied: 'd' } as const satisfies Record<SceneStatus, string>
const SCENE_STATUS_OF = new Map(Object.entries(SCENE_STATUS).map(([status, code]) => [code as string, status as SceneStatus]))

/** Appended to the status letter in the extended form. */
const EXTENDED = '+'

/** What a scene tail is built from: every field but `version`, `id`, `userId` (the script's) and `sceneStr` (the key's). */
export type SceneTailFields = Pick<
  SceneRecord,
  'status' | 'createdAt' | 'expiresAt' | 'authorizedAt' | 'deviceId' | 'requestedFrom' | 'pollSecretHash' | 'confirmation'
>

/** The scene fields after `version|id|userId` (the commit script writes those three). */
export function sceneTail(scene: SceneTailFields): string {
  const status = SCENE_STATUS[scene.status]
  const times = [num(scene.createdAt), num(scene.expiresAt), optNum(scene.authorizedAt)]
  const { requestedFrom, pollSecretHash, confirmation } = scene
  if (requestedFrom === null && pollSecretHash === null && confirmation === null) return [status, ...times, scene.deviceId].join(SEP)
  const texts = [requestedFrom, pollSecretHash, confirmation?.scannedBy ?? null, confirmation?.ticketHash ?? null, confirmation?.csrfHash ?? null]
  return [
    status + EXTENDED,
    ...times,
    confirmation === null ? '' : num(confirmation.scannedAt),
    texts.map((text) => (text === null ? '' : String(text.length))).join(','),
    texts.join('') + scene.deviceId,
  ].join(SEP)
}

/** A whole scene value (what the commit script stores once it knows the ids). */
export function encodeScene(scene: SceneRecord): string {
  return [num(scene.version), num(scene.id), optNum(scene.userId), sceneTail(scene)].join(SEP)
}

/** A scene from its stored value, in either form. The hottest decode of all (every pending poll): kept lean. */
export function decodeScene(sceneStr: string, value: string): SceneRecord {
  const parts = value.split(SEP)
  const code = parts[3]
  const extended = code !== undefined && code.length === 2 && code[1] === EXTENDED
  const f = splitFields(parts, extended ? 10 : 8, 'scene', value)
  const status = SCENE_STATUS_OF.get(extended ? (code as string)[0] as string : (code as string))
  const scene: SceneRecord = {
    id: Number(f[1]),
    sceneStr,
    deviceId: f[7] as string,
    status: status as SceneStatus,
    userId: f[2] === '' ? null : Number(f[2]),
    createdAt: Number(f[4]),
    expiresAt: Number(f[5]),
    authorizedAt: f[6] === '' ? null : Number(f[6]),
    requestedFrom: null,
    pollSecretHash: null,
    confirmation: null,
    version: Number(f[0]),
  }
  // One check for every number (NaN and Infinity poison the sum), and for the required fields.
  const sum = scene.id + scene.createdAt + scene.expiresAt + scene.version + (scene.userId ?? 0) + (scene.authorizedAt ?? 0)
  if (status === undefined || !Number.isFinite(sum) || f[0] === '' || f[1] === '' || f[4] === '' || f[5] === '') {
    throw malformed('scene', value)
  }
  if (extended) decodeExtension(scene, f[7] as string, f[8] as string, f[9] as string, value)
  return scene
}

/** Fills in the three fields of the extended form from its `scannedAt`, `lengths` and `texts` fields. */
function decodeExtension(scene: SceneRecord, scannedAt: string, lengths: string, texts: string, value: string): void {
  const sizes = lengths.split(',')
  if (sizes.length !== 5) throw malformed('scene', value)
  let at = 0
  const next = (size: string): string | null => {
    if (size === '') return null
    const n = Number(size)
    if (!Number.isSafeInteger(n) || n < 0 || at + n > texts.length) throw malformed('scene', value)
    at += n
    return texts.slice(at - n, at)
  }
  const [requestedFrom, pollSecretHash, scannedBy, ticketHash, csrfHash] = sizes.map(next)
  scene.requestedFrom = requestedFrom ?? null
  scene.pollSecretHash = pollSecretHash ?? null
  scene.deviceId = texts.slice(at)
  if (scannedAt === '') {
    // No confirmation: none of its texts may be there either.
    if (scannedBy != null || ticketHash != null || csrfHash != null) throw malformed('scene', value)
    return
  }
  const time = Number(scannedAt)
  if (!Number.isFinite(time) || scannedBy == null || ticketHash == null) throw malformed('scene', value)
  const confirmation: SceneConfirmation = { scannedBy, scannedAt: time, ticketHash, csrfHash: csrfHash ?? null }
  scene.confirmation = confirmation
}
