/**
 * A manual clock for driving time through `createScanAuth({ now })`.
 *
 * @module
 */

/** A clock that moves only when told to. */
export class ManualClock {
  private current: number

  /** Starts at `start` (epoch ms or an ISO string); default 2026-01-01T00:00:00Z. */
  constructor(start: number | string = '2026-01-01T00:00:00.000Z') {
    this.current = typeof start === 'string' ? Date.parse(start) : start
  }

  /** The `now` option: returns the current time in epoch milliseconds. */
  readonly now = (): number => this.current

  /** Moves forward by `ms` milliseconds. */
  advance(ms: number): void {
    this.current += ms
  }

  /** Moves forward by `seconds`. */
  advanceSeconds(seconds: number): void {
    this.advance(seconds * 1000)
  }

  /** Jumps to an absolute time. */
  set(ms: number): void {
    this.current = ms
  }
}
