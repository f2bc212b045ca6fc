/**
 * What the three ways of waiting on a scene share: the input of a wait, and what one transport's
 * attempt comes to.
 *
 * @module
 */
import type { HttpSettings } from './http'
import type { Transport, TransportOption } from './types'
import type { StatusBody } from './wire'

/** The transport in use, shared by the scenes of one call (a fallback is kept for the next code). */
export interface TransportState {
  /** The caller's choice. */
  option: TransportOption
  /** The transport now in use. */
  current: Transport
}

/** One wait on one scene. */
export interface WaitInput {
  /** How to send. */
  http: HttpSettings
  /** The scene. */
  sceneStr: string
  /**
   * The scene's poll secret, when `create_scene` answered one (a server with `requirePollSecret`):
   * sent as `X-Scanauth-Poll-Secret` on every status request and event stream of the scene.
   */
  pollSecret?: string
  /** The call's signal. */
  signal: AbortSignal
  /** The transport (updated on a fallback). */
  transports: TransportState
  /** Milliseconds between plain polls. */
  pollIntervalMs: number
  /** A sign-in ends on anything but `pending` and `scanned`; a payment also waits through `need_purchase`. */
  purpose: 'sign-in' | 'payment'
  /** For a payment: past this time (epoch ms) a `need_purchase` is final (the order's deadline). */
  deadlineMs?: number
  /** Told of every status read, before the wait acts on it. */
  onStatus(status: StatusBody, transport: Transport): void
}

/** What one transport's attempt at a wait came to. */
export type WaitOutcome =
  /** The status that ends the wait. */
  | { kind: 'final'; status: StatusBody }
  /** This transport does not work here; `error` is what to reject with when there is no fallback. */
  | { kind: 'fallback'; error: Error }

/** The status the client acts on for a scene the server does not know (404): expired (a server restarted with a memory store). */
export const UNKNOWN_SCENE: StatusBody = { status: 'expired' }

/** Whether a payment's deadline has passed. */
export function pastDeadline(input: WaitInput): boolean {
  return input.deadlineMs !== undefined && Date.now() > input.deadlineMs
}

/** The header that carries a scene's poll secret (B-secret-1…4). */
export const POLL_SECRET_HEADER = 'x-scanauth-poll-secret'

/** The headers of a request about the scene: its poll secret, when it has one. */
export function sceneHeaders(input: Pick<WaitInput, 'pollSecret'>): Record<string, string> | undefined {
  return input.pollSecret === undefined ? undefined : { [POLL_SECRET_HEADER]: input.pollSecret }
}

/** The query string of a scene. */
export function sceneQuery(sceneStr: string): string {
  return `scene=${encodeURIComponent(sceneStr)}`
}
