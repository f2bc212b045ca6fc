/**
 * The knobs of the WeChat Pay emulator: their defaults (everything off, WeChat on a good day) and
 * the check of a change, whether it comes from an option, `setKnobs` or `POST /emulator/knobs`.
 *
 * @module
 */
import { WechatEmulatorError, type WechatEmulatorErrorCode } from '../errors'
import type { WechatPayKnobs } from './types'

/** Every knob off. */
export const DEFAULT_KNOBS: Readonly<WechatPayKnobs> = Object.freeze({
  probeFirst: false,
  duplicateSameId: false,
  duplicateNewId: false,
  timestampSkewSeconds: 0,
  emptyAssociatedData: false,
  previousKeyShare: 0,
})

const BOOLEAN_KNOBS = ['probeFirst', 'duplicateSameId', 'duplicateNewId', 'emptyAssociatedData'] as const

/** `current` with `change` applied, or a `code` error naming the first unknown knob or bad value. */
export function applyKnobs(current: WechatPayKnobs, change: unknown, code: WechatEmulatorErrorCode, where: string): WechatPayKnobs {
  if (typeof change !== 'object' || change === null || Array.isArray(change)) throw new WechatEmulatorError(code, `${where}: knobs must be an object`)
  const next = { ...current }
  for (const [name, value] of Object.entries(change as Record<string, unknown>)) {
    if (value === undefined) continue
    if ((BOOLEAN_KNOBS as readonly string[]).includes(name)) {
      if (typeof value !== 'boolean') throw new WechatEmulatorError(code, `${where}: knob ${name} must be a boolean`)
      next[name as (typeof BOOLEAN_KNOBS)[number]] = value
    } else if (name === 'timestampSkewSeconds') {
      if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw new WechatEmulatorError(code, `${where}: knob timestampSkewSeconds must be an integer`)
      next.timestampSkewSeconds = value
    } else if (name === 'previousKeyShare') {
      if (typeof value !== 'number' || !(value >= 0 && value <= 1)) throw new WechatEmulatorError(code, `${where}: knob previousKeyShare must be a number from 0 to 1`)
      next.previousKeyShare = value
    } else {
      throw new WechatEmulatorError(code, `${where}: unknown knob ${name}; use ${Object.keys(DEFAULT_KNOBS).join(', ')}`)
    }
  }
  return next
}
