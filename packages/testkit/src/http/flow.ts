/**
 * The steps of the sign-in flow over HTTP, each with the checks every route test makes on it. `url`
 * is a base URL with the scanauth routes at `/auth` below it.
 *
 * @module
 */
import { expect } from 'vitest'
import { fetchJson, postJson } from './fetch-json'

/** The session of a device that {@link pollAuthorized} found authorized. */
export interface AuthorizedPoll {
  /** The session token. */
  token: string
  /** Its header, ready to pass to `fetch`. */
  bearer: {
    /** `Bearer <token>`. */
    authorization: string
  }
}

/**
 * `POST /auth/create_scene` for `deviceId`, which must answer 200 with a scene that polls as
 * `pending`. Resolves with the answer's body (`scene_str`, `qr_url`, `expires_in`, and `qr_content`
 * when the QR provider gives the code's text).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- test bodies are read field by field
export async function createPendingScene(url: string, deviceId: string): Promise<any> {
  const created = await postJson(`${url}/auth/create_scene`, { device_id: deviceId })
  expect(created.status).toBe(200)
  expect((await fetchJson(`${url}/auth/status?scene=${created.body.scene_str}`)).body).toEqual({ status: 'pending' })
  return created.body
}

/**
 * Polls `scene`, which must be authorized by now with the free trial (a time authorization): a JSON
 * answer that is never cached, with the session token. Resolves with the token and its header.
 */
export async function pollAuthorized(url: string, scene: string): Promise<AuthorizedPoll> {
  const polled = await fetchJson(`${url}/auth/status?scene=${scene}`)
  expect(polled.status).toBe(200)
  expect(polled.headers.get('content-type')).toMatch(/^application\/json/)
  expect(polled.headers.get('cache-control')).toBe('no-store')
  expect(polled.body).toEqual({
    status: 'authorized',
    session_token: expect.any(String),
    authorization: { type: 'time', end_at: expect.any(String), remaining_points: 0 },
  })
  const token = polled.body.session_token as string
  return { token, bearer: { authorization: `Bearer ${token}` } }
}

/**
 * Reads the session behind `bearer` (`GET /auth/session`), which must be on `deviceId` with a time
 * authorization, then consumes once with it (`POST /auth/consume` answers `ok`). Resolves with the
 * session's body.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- test bodies are read field by field
export async function useSession(url: string, bearer: { authorization: string }, deviceId: string): Promise<any> {
  const session = await fetchJson(`${url}/auth/session`, { headers: bearer })
  expect(session.status).toBe(200)
  expect(session.body).toMatchObject({ device_id: deviceId, authorization: { type: 'time' } })
  expect((await postJson(`${url}/auth/consume`, {}, bearer)).body).toMatchObject({ status: 'ok', authorization: { type: 'time' } })
  return session.body
}
