/**
 * Failures on demand: tests queue a replacement for the next answers of an endpoint.
 *
 * @module
 */
import { WechatEmulatorError } from './errors'
import type { EmulatorEndpoint, EmulatorFailure } from './types'

const ENDPOINTS: ReadonlySet<string> = new Set<EmulatorEndpoint>([
  'stable_token',
  'token',
  'qrcode/create',
  'showqrcode',
  'sns/oauth2/access_token',
  'message/template/send',
  'message/template/subscribe',
  'message/custom/send',
])

/** Queued failures per endpoint, used first-in first-out. */
export class FailureQueue {
  readonly #queues = new Map<EmulatorEndpoint, EmulatorFailure[]>()

  /** Queues `failure` for the next `times` requests of `endpoint` (`cgi-bin/` prefix optional). */
  add(endpoint: string, failure: EmulatorFailure, times = 1): void {
    const name = endpoint.replace(/^\/?(cgi-bin\/)?/, '')
    if (!ENDPOINTS.has(name)) throw new WechatEmulatorError('invalid_argument', `failNext: unknown endpoint ${endpoint}; use one of ${[...ENDPOINTS].join(', ')}`)
    if (!(Number.isInteger(times) && times > 0)) throw new WechatEmulatorError('invalid_argument', 'failNext: times must be a positive integer')
    const queue = this.#queues.get(name as EmulatorEndpoint) ?? []
    for (let i = 0; i < times; i++) queue.push(failure)
    this.#queues.set(name as EmulatorEndpoint, queue)
  }

  /** The failure to apply to this request of `endpoint`, if one is queued. */
  take(endpoint: EmulatorEndpoint): EmulatorFailure | undefined {
    return this.#queues.get(endpoint)?.shift()
  }
}
