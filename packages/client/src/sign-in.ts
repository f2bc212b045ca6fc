/**
 * `signIn`: create a scene, hand its code to `onCode`, wait for the scan (and, on a server with
 * `confirm: 'link'`, through `scanned` for the scanner's decision), refresh an expired code up to
 * `maxRefreshes` times.
 *
 * @module
 */
import { runAbortable } from './abortable'
import { ScanAuthClientError } from './errors'
import { sendForJson, type HttpSettings } from './http'
import { requiredFunction, requiredText, transportOption, wholeNumber } from './options'
import { DEFAULT_POLL_INTERVAL_MS, firstTransport } from './transport'
import type { SceneSecrets } from './scene-secrets'
import type { SignInAuthorized, SignInOptions, SignInResult } from './types'
import type { TransportState } from './wait-context'
import { waitScene } from './wait-scene'
import { readScene } from './wire'

/** The default number of refreshes of an expired code. */
export const DEFAULT_MAX_REFRESHES = 3

/**
 * Runs one sign-in (see `ScanAuthClient.signIn`). `secrets` keeps the poll secret of a scene the
 * sign-in ends on with `need_purchase`, for the purchase that waits on it.
 */
export function signIn(http: HttpSettings, options: SignInOptions, secrets?: SceneSecrets): Promise<SignInResult> {
  const deviceId = requiredText('deviceId', options.deviceId)
  requiredFunction('onCode', options.onCode)
  const maxRefreshes = wholeNumber('maxRefreshes', options.maxRefreshes, DEFAULT_MAX_REFRESHES, 0, 1000)
  const pollIntervalMs = wholeNumber('pollIntervalMs', options.pollIntervalMs, DEFAULT_POLL_INTERVAL_MS, 100, 600_000)
  const option = transportOption(options.transport)

  return runAbortable<SignInResult>(options.signal, async (signal, hold) => {
    // A fallback found on one code is kept for the next: a proxy that refused the stream still does.
    const transports: TransportState = { option, current: firstTransport(option) }
    for (let refresh = 0; ; refresh++) {
      const scene = readScene(await sendForJson(http, 'create_scene', { method: 'POST', json: { device_id: deviceId }, signal, retryNetwork: true }))
      const expiresAt = new Date(Date.now() + scene.expiresIn * 1000).toISOString()
      options.onCode({ sceneStr: scene.sceneStr, qrUrl: scene.qrUrl, qrContent: scene.qrContent, expiresAt, refresh })
      const status = await waitScene({
        http,
        sceneStr: scene.sceneStr,
        // Sent on every request about the scene, never shown to the app (not in `onCode`).
        pollSecret: scene.pollSecret,
        signal,
        transports,
        pollIntervalMs,
        purpose: 'sign-in',
        onStatus(body, transport) {
          // Held before anyone is told: an abort from here on still resolves `authorized`.
          if (body.status === 'authorized' && body.sessionToken !== undefined && body.authorization !== undefined) {
            hold(authorized(scene.sceneStr, body.sessionToken, body.authorization))
          }
          options.onStatus?.({ sceneStr: scene.sceneStr, status: body.status, transport })
        },
      })
      if (status.status === 'authorized' && status.sessionToken !== undefined && status.authorization !== undefined) {
        return authorized(scene.sceneStr, status.sessionToken, status.authorization)
      }
      if (status.status === 'need_purchase') {
        if (scene.pollSecret !== undefined) secrets?.keep(scene.sceneStr, scene.pollSecret)
        return { status: 'need_purchase', sceneStr: scene.sceneStr }
      }
      // The scanner refused on the phone (`confirm: 'link'`): an answer, not a failure; no new code.
      if (status.status === 'denied') return { status: 'denied', sceneStr: scene.sceneStr }
      if (status.status !== 'expired') {
        throw new ScanAuthClientError('http', `The server answered a status this client does not know: ${status.status}`, { detail: status.status })
      }
      if (refresh >= maxRefreshes) {
        throw new ScanAuthClientError('expired', `The code expired ${maxRefreshes === 0 ? 'and refreshing is off' : `after ${maxRefreshes} refresh${maxRefreshes === 1 ? '' : 'es'}`}`)
      }
    }
  })
}

function authorized(sceneStr: string, sessionToken: string, authorization: SignInAuthorized['authorization']): SignInAuthorized {
  return { status: 'authorized', sceneStr, sessionToken, authorization }
}
