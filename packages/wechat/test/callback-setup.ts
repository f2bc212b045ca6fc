// What the callback's unit tests share: an account, a handleScan that records its calls (core itself
// runs in the end-to-end and shared-store tests), signed queries on a manual clock, event bodies.
import type { ScanInput, ScanResult } from '@scanauth/core'
import { computeSignature, createWechatCallback, type WechatCallbackOptions, type WechatMessage } from '../src/index'
import { buildXml } from '../src/xml'
import { manualClock } from './helpers'

export const TOKEN = 'tok3n'
export const APP_ID = 'wx0123456789abcdef'
export const KEY = 'Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8L9z0X1c'
export const ACCOUNT = 'gh_0123456789ab'

/** A handleScan that records its calls and answers `result` (or what the function resolves to). */
export function recordingAuth(result: ScanResult | ((input: ScanInput) => Promise<ScanResult>) = { result: 'authorized', userId: 1 }) {
  const calls: ScanInput[] = []
  return {
    calls,
    auth: {
      async handleScan(input: ScanInput): Promise<ScanResult> {
        calls.push(input)
        return typeof result === 'function' ? result(input) : result
      },
    },
  }
}

/** A signed query for `at` (epoch ms) with the given nonce. */
export function signedQuery(at: number, nonce: string, extra: Record<string, string> = {}) {
  const timestamp = String(Math.floor(at / 1000))
  return { signature: computeSignature(TOKEN, timestamp, nonce), timestamp, nonce, ...extra }
}

/** A callback for the test account on a manual clock, recording scans, other messages and errors. */
export function setup(options: Partial<WechatCallbackOptions> = {}, result?: Parameters<typeof recordingAuth>[0]) {
  const clock = manualClock()
  const { auth, calls } = recordingAuth(result)
  const messages: WechatMessage[] = []
  const errors: Array<{ error: unknown; message: WechatMessage | undefined }> = []
  const callback = createWechatCallback({
    auth,
    token: TOKEN,
    appId: APP_ID,
    now: clock.now,
    onMessage: (message) => void messages.push(message),
    onError: (error, message) => void errors.push({ error, message }),
    ...options,
  })
  let n = 0
  /** A signed query for now (or `at`), with a fresh nonce. */
  const query = (extra: Record<string, string> = {}, at = clock.now()) => signedQuery(at, String(100000 + n++), extra)
  const event = (fields: Record<string, string | number>) =>
    buildXml({ ToUserName: ACCOUNT, FromUserName: 'o_user', CreateTime: Math.floor(clock.now() / 1000), MsgType: 'event', ...fields })
  return { clock, calls, messages, errors, callback, query, event }
}
