/**
 * The code of the device's routes (routes.ts declares them): creating a scene, polling it or
 * following it as an event stream, and using the session the scan gave.
 *
 * @module
 */
import { ScanAuthError } from '../errors'
import { headerValue, pollSecretOf, requireBearer } from './request'
import { nextStep, statusEvents } from './events'
import { EventStream, NO_CONTENT, type RouteRun } from './route'
import type { HttpRequest } from './types'
import { consumeBody, createSceneBody, sessionBody, statusBody } from './wire'
import type { consumeRequest, createSceneRequest, eventsQuery, statusQuery } from './wire-schemas'

/** `POST create_scene`. */
export const createScene: RouteRun<never, typeof createSceneRequest> = async (request, { auth }, input) => {
  const body = input.body(request)
  // An empty address (Koa's `ctx.ip` when the socket is gone) is no address.
  const address = request.clientAddress
  return createSceneBody(await auth.createScene({ deviceId: body.device_id, clientAddress: address === '' ? undefined : address }))
}

/** `GET status`: the hottest path of the library, a pending poll is one read. */
export const getStatus: RouteRun<typeof statusQuery> = async (request, { auth, purchaseUrl }, input) => {
  const { scene, wait } = input.query(request)
  // Without `wait`, exactly the plain poll (one read when pending); with it, a long poll (B-wait-2).
  const pollSecret = pollSecretOf(request)
  const status = wait === undefined
    ? await auth.getStatus(scene, { pollSecret })
    : await auth.waitForStatus(scene, { timeoutMs: wait * 1000, signal: request.signal, pollSecret })
  return statusBody(status, purchaseUrl)
}

/** `GET events`: the event stream (B-wait-3, B-wait-5). */
export const streamEvents: RouteRun<typeof eventsQuery> = async (request, { auth, purchaseUrl, heartbeatMs, onError }, input) => {
  const sceneStr = input.query(request).scene
  // Read before the stream starts, so an unknown scene is a plain 404 with {detail}.
  const pollSecret = pollSecretOf(request)
  const first = await auth.getStatus(sceneStr, { pollSecret })
  // A reconnect to a scene that has ended with the status the client last saw: 204, which makes
  // a browser's EventSource stop reconnecting (B-wait-5). One that ended otherwise while the
  // client was away (a scan during a dropped connection) gets that status, like a first
  // connection gets the final status and the end (B-wait-3).
  const lastSeen = lastEventId(request)
  if (lastSeen !== undefined) {
    const step = await nextStep(auth, sceneStr, first, pollSecret)
    if (!step.goesOn && step.status.status === lastSeen) return NO_CONTENT
  }
  if (request.method.toUpperCase() === 'HEAD') return new EventStream(undefined)
  const report = (error: unknown) => onError?.(error, request)
  return new EventStream(statusEvents({ auth, sceneStr, first, pollSecret, signal: request.signal, heartbeatMs, purchaseUrl, onError: report }))
}

/** `GET session`. */
export const getSession: RouteRun = async (request, { auth }) => {
  const info = await auth.verifySession(requireBearer(request))
  if (info === null) throw new ScanAuthError('unauthorized', 'Session is unknown or has expired')
  return sessionBody(info)
}

/** `POST consume`: the Bearer token first, then the body. */
export const consume: RouteRun<never, typeof consumeRequest> = async (request, { auth, purchaseUrl }, input) => {
  const token = requireBearer(request)
  const { points } = input.body(request)
  return consumeBody(await auth.consume({ sessionToken: token, points }), purchaseUrl)
}

/** `POST logout`: ends the presented session only; the user's other devices stay signed in. */
export const logout: RouteRun = async (request, { auth }) => {
  if (!(await auth.revokeSession(requireBearer(request)))) {
    throw new ScanAuthError('unauthorized', 'Session is unknown or has expired')
  }
  return NO_CONTENT
}

/**
 * The `Last-Event-ID` of a reconnect: the status the client last saw (every `status` event's id is
 * its status, B-wait-5), which `EventSource` sends back once a stream has given it an id; undefined
 * for a first connection (no header, or an empty one).
 */
function lastEventId(request: HttpRequest): string | undefined {
  const id = headerValue(request, 'last-event-id')
  return id === undefined || id === '' ? undefined : id
}
