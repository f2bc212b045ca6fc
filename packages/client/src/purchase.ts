/**
 * `purchase`: open an order (`POST purchase`), hand its pay code to `onCode`, wait until it is paid.
 * A scene purchase waits on the scene like a sign-in (the server keeps it waiting while the order is
 * open, B-order-7); a session purchase asks `GET order?id=` until the order is paid (B-order-11): a
 * plan bought while another authorization is current only queues, so the session shows no change.
 *
 * @module
 */
import { runAbortable, sleep } from './abortable'
import { ScanAuthClientError } from './errors'
import { sendForJson, type HttpSettings } from './http'
import { requiredFunction, requiredText, transportOption, wholeNumber } from './options'
import type { SceneSecrets } from './scene-secrets'
import { getSession } from './session'
import { DEFAULT_POLL_INTERVAL_MS, firstTransport } from './transport'
import type { OrderCode, PurchaseOptions, PurchaseResult } from './types'
import { sceneHeaders } from './wait-context'
import { waitScene } from './wait-scene'
import { readOrder } from './wire'

/** How long past the order's deadline the client keeps waiting: the clocks of device and server differ. */
const DEADLINE_GRACE_MS = 10_000

function unpaid(order: OrderCode): ScanAuthClientError {
  return new ScanAuthClientError('expired', `Order ${order.orderId} was not paid before its deadline (${order.expiresAt})`)
}

/** Where an order stands, as `GET order?id=` answers it. */
function orderStatus(body: unknown): string {
  const status = (body as { status?: unknown } | null)?.status
  if (typeof status !== 'string') throw new ScanAuthClientError('http', 'GET order answered without a status')
  return status
}

/**
 * Runs one purchase (see `ScanAuthClient.purchase`). A scene purchase presents the scene's poll
 * secret from `secrets`, when the sign-in that ended on `need_purchase` kept one: on `POST purchase`
 * (the server opens an order through such a scene only with it, B-order-13) and on its waits.
 */
export function purchase(http: HttpSettings, options: PurchaseOptions, secrets?: SceneSecrets): Promise<PurchaseResult> {
  const plan = requiredText('plan', options.plan)
  requiredFunction('onCode', options.onCode)
  const option = transportOption(options.transport)
  const pollIntervalMs = wholeNumber('pollIntervalMs', options.pollIntervalMs, DEFAULT_POLL_INTERVAL_MS, 100, 600_000)
  const sceneStr = options.sceneStr
  const sessionToken = options.sessionToken
  if ((sceneStr === undefined) === (sessionToken === undefined)) throw new TypeError('@scanauth/client: purchase takes either sceneStr or sessionToken')

  return runAbortable<PurchaseResult>(options.signal, async (signal, hold) => {
    if (sceneStr !== undefined) {
      requiredText('sceneStr', sceneStr)
      const pollSecret = secrets?.get(sceneStr)
      const headers = sceneHeaders({ pollSecret })
      const order = readOrder(await sendForJson(http, 'purchase', { method: 'POST', json: { scene: sceneStr, plan }, headers, signal, retryNetwork: true }))
      options.onCode(order)
      const status = await waitScene({
        http,
        sceneStr,
        pollSecret,
        signal,
        transports: { option, current: firstTransport(option) },
        pollIntervalMs,
        purpose: 'payment',
        deadlineMs: Date.parse(order.expiresAt) + DEADLINE_GRACE_MS,
        onStatus(body, transport) {
          if (body.status === 'authorized' && body.sessionToken !== undefined && body.authorization !== undefined) {
            hold({ status: 'authorized', orderId: order.orderId, sceneStr, sessionToken: body.sessionToken, authorization: body.authorization })
          }
          options.onStatus?.({ sceneStr, status: body.status, transport })
        },
      })
      if (status.status === 'authorized' && status.sessionToken !== undefined && status.authorization !== undefined) {
        secrets?.forget(sceneStr)
        return { status: 'authorized', orderId: order.orderId, sceneStr, sessionToken: status.sessionToken, authorization: status.authorization }
      }
      throw unpaid(order)
    }

    const token = requiredText('sessionToken', sessionToken)
    const ended = () => new ScanAuthClientError('http', 'The session has ended', { status: 401 })
    const before = await getSession(http, token, signal)
    if (before === null) throw ended()
    const order = readOrder(await sendForJson(http, 'purchase', { method: 'POST', json: { plan }, token, signal, retryNetwork: true }))
    options.onCode(order)
    const deadlineMs = Date.parse(order.expiresAt) + DEADLINE_GRACE_MS
    const orderPath = `order?id=${encodeURIComponent(order.orderId)}`
    for (;;) {
      await sleep(pollIntervalMs, signal)
      const status = orderStatus(await sendForJson(http, orderPath, { token, signal, retryNetwork: true }))
      if (status === 'paid' || status === 'refunded') {
        // Paid: the session now holds the plan, current or queued behind the current authorization.
        const now = await getSession(http, token, signal)
        if (now === null) throw ended()
        if (now.authorization === null) throw new ScanAuthClientError('http', `Order ${order.orderId} was paid but the session has no current authorization`)
        return { status: 'authorized', orderId: order.orderId, sceneStr: undefined, sessionToken: token, authorization: now.authorization }
      }
      if (status === 'closed' || Date.now() > deadlineMs) throw unpaid(order)
    }
  })
}
