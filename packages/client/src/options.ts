/**
 * Checking the options a caller passes, so that a mistake fails at once with a clear message rather
 * than as a strange wait.
 *
 * @module
 */
import type { TransportOption } from './types'

const TRANSPORTS: ReadonlySet<string> = new Set(['auto', 'events', 'long-poll', 'poll'])

/** A `TypeError` naming the option. */
function invalid(what: string): TypeError {
  return new TypeError(`@scanauth/client: ${what}`)
}

/** The `transport` option, default `'auto'`. */
export function transportOption(value: unknown): TransportOption {
  if (value === undefined) return 'auto'
  if (typeof value !== 'string' || !TRANSPORTS.has(value)) throw invalid(`transport must be 'auto', 'events', 'long-poll' or 'poll'`)
  return value as TransportOption
}

/** A whole number in [min, max], or `fallback` when undefined. */
export function wholeNumber(name: string, value: unknown, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) throw invalid(`${name} must be a whole number from ${min} to ${max}`)
  return value
}

/** A non-empty string. */
export function requiredText(name: string, value: unknown): string {
  if (typeof value !== 'string' || value === '') throw invalid(`${name} must be a non-empty string`)
  return value
}

/** A callback. */
export function requiredFunction(name: string, value: unknown): void {
  if (typeof value !== 'function') throw invalid(`${name} must be a function`)
}
