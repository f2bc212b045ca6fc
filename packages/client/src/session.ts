/**
 * The session routes: `GET session`, `POST consume`, `POST logout`, and the catalog `GET plans`.
 *
 * @module
 */
import { ScanAuthClientError } from './errors'
import { discard, httpError, readJson, send, sendForJson, type HttpSettings } from './http'
import { requiredText } from './options'
import type { ConsumeResult, Plan, SessionInfo } from './types'
import { readConsume, readPlans, readSession } from './wire'

/** A signal that never aborts, for calls that take none. */
function neverAborted(): AbortSignal {
  return new AbortController().signal
}

/** `GET session` with the token: the session, or null once it has ended (401). */
export async function getSession(http: HttpSettings, token: string, signal: AbortSignal = neverAborted()): Promise<SessionInfo | null> {
  requiredText('token', token)
  const response = await send(http, 'session', { token, signal, retryNetwork: true })
  if (response.status === 401) {
    discard(response)
    return null
  }
  if (response.status !== 200) throw await httpError(response, 'session')
  return readSession(await readJson(response, 'session'))
}

/**
 * `POST consume` with the token. Not retried after a network failure: the server may have taken the
 * points already, and the route has no idempotency key.
 */
export async function consume(http: HttpSettings, token: string, points: number | undefined): Promise<ConsumeResult> {
  requiredText('token', token)
  if (points !== undefined && (!Number.isInteger(points) || points < 1)) throw new TypeError('@scanauth/client: points must be a whole number from 1')
  const body = await sendForJson(http, 'consume', { method: 'POST', json: points === undefined ? {} : { points }, token, signal: neverAborted(), retryNetwork: false })
  return readConsume(body)
}

/** `POST logout` with the token: true when this ended the session, false when it had already ended (401). */
export async function logout(http: HttpSettings, token: string): Promise<boolean> {
  requiredText('token', token)
  const response = await send(http, 'logout', { method: 'POST', token, signal: neverAborted(), retryNetwork: true })
  discard(response)
  if (response.status === 204 || response.status === 200) return true
  if (response.status === 401) return false
  throw new ScanAuthClientError('http', `logout answered ${response.status}`, { status: response.status })
}

/** `GET plans`: the catalog in its order (empty without payments). */
export async function listPlans(http: HttpSettings): Promise<Plan[]> {
  return readPlans(await sendForJson(http, 'plans', { signal: neverAborted(), retryNetwork: true }))
}
