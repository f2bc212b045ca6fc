/**
 * Events passed to the optional hooks of `createScanAuth`.
 *
 * @module
 */
import type { ScanResult } from './api'
import type { Authorization } from './views'

/** A handled scan. */
export interface ScanEvent {
  /** The scanned scene. */
  sceneStr: string
  /** Who scanned it. */
  openid: string
  /** What the scan did. */
  result: ScanResult['result']
  /** The user, unless the scan was invalid. */
  userId?: number
}

/** An authorization became active (by a scan, a grant, a poll or a consume). */
export interface ActivationEvent {
  /** The authorization, as it is now. */
  authorization: Authorization
}
