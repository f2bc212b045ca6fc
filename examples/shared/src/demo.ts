/**
 * The demo page's endpoints under `/demo/`: what the page should offer, the emulated phone's scan,
 * and the demo purchase. Each takes the parsed JSON body and returns a {@link DemoResponse} for any
 * framework to send. The scan and the purchase exist only in emulator mode (404 otherwise): on a
 * real account, people scan with WeChat and pay through the app's own payment flow.
 *
 * @module
 */
import { ScanAuthError, SCENE_STR_PATTERN, type ScanAuth } from '@scanauth/core'
import type { WechatEmulator } from '@scanauth/wechat-emulator'

/** A response of the demo endpoints, for any framework to send as JSON. */
export interface DemoResponse {
  /** HTTP status. */
  status: number
  /** The JSON body: the answer, or `{detail}` for an error. */
  body: unknown
}

/** What the demo purchase grants: 30 days of time, with a source the ledger shows as a demo. */
export const DEMO_PURCHASE = { type: 'time', durationSeconds: 30 * 86_400, source: 'demo-purchase' } as const

/** The openids the emulated phone uses (`phone-<hex>` on the page); stricter than core's 1–128 characters, for the log's sake. */
const OPENID = /^[\w-]{1,64}$/
const OPENID_RULE = 'openid must be 1-64 letters, digits, _ or -'

/** What the demo endpoints work with. */
export interface DemoContext {
  /** The scanauth instance the purchase grants through. */
  auth: ScanAuth
  /** The in-process emulator; null with a real account, where the demo endpoints answer 404. */
  emulator: WechatEmulator | null
  /** The server's log. */
  log(line: string): void
}

const fields = (body: unknown) => (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>

/** `POST /demo/emulator-scan` `{scene_str, openid}`: the emulated phone scans the scene. */
export async function demoScan({ emulator, log }: DemoContext, body: unknown): Promise<DemoResponse> {
  if (emulator === null) return { status: 404, body: { detail: 'No emulator: scan the code with WeChat' } }
  const { scene_str: sceneStr, openid } = fields(body)
  if (typeof sceneStr !== 'string' || !SCENE_STR_PATTERN.test(sceneStr)) return { status: 400, body: { detail: 'scene_str is required' } }
  if (typeof openid !== 'string' || !OPENID.test(openid)) return { status: 400, body: { detail: OPENID_RULE } }
  try {
    const push = await emulator.scan({ sceneStr, openid })
    if (push.status !== 200) throw new Error(`the callback answered ${push.status ?? 'nothing'}`)
    return { status: 200, body: { scanned: sceneStr, reply: push.reply?.Content ?? null } }
  } catch (error) {
    log(`emulated scan failed: ${error instanceof Error ? error.message : String(error)}`)
    return { status: 502, body: { detail: `The emulated scan failed: ${error instanceof Error ? error.message : String(error)}` } }
  }
}

/**
 * `POST /demo/buy` `{openid, idempotency_key}`: a demo purchase of 30 days for `openid`, as an
 * app's payment notification would grant it. The page makes the key once per offer, so a double
 * click or a retry after a lost answer buys once (docs/behaviour.md, B-idem-3: a repeat returns the
 * first grant). 200 `{authorization}`; 400 for a bad openid or key; 409 when the key was used for
 * another purchase; 404 outside emulator mode.
 */
export async function demoBuy({ auth, emulator, log }: DemoContext, body: unknown): Promise<DemoResponse> {
  if (emulator === null) return { status: 404, body: { detail: 'The demo purchase exists only with the WeChat emulator' } }
  const { openid, idempotency_key: key } = fields(body)
  if (typeof openid !== 'string' || !OPENID.test(openid)) return { status: 400, body: { detail: OPENID_RULE } }
  // Its limits (D-identifiers) are core's: an empty or over-long key comes back as a 400 below.
  if (typeof key !== 'string') return { status: 400, body: { detail: 'idempotency_key must be a string' } }
  try {
    const a = await auth.grant({ openid, ...DEMO_PURCHASE, idempotencyKey: key })
    log(`demo purchase ${key} by ${openid}: authorization ${a.id} (${a.status})`)
    return {
      status: 200,
      body: { authorization: { id: a.id, user_id: a.userId, type: a.type, status: a.status, end_at: a.endAt, source: a.source } },
    }
  } catch (error) {
    // idempotency_conflict is 409; a key core refuses (empty, over 128 characters, control
    // characters) is 400. Anything else is
    // not a ScanAuthError and goes on to the framework's 500.
    if (error instanceof ScanAuthError) return { status: error.status, body: { detail: error.message } }
    throw error
  }
}
