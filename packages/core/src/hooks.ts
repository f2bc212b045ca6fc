/**
 * Events passed to the optional hooks of `createScanAuth`.
 *
 * @module
 */
import type { ScanResult } from './api'
import type { Authorization } from './views'

/** A handled scan. */
export interface ScanEvent {
  sceneStr: string
  openid: string
  result: ScanResult['result']
  userId?: number
}

/** An authorization became active (by a scan, a grant, a poll or a consume). */
export interface ActivationEvent {
  authorization: Authorization
}
