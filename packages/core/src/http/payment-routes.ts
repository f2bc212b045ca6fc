/**
 * The code of the payment routes (routes.ts declares them): the catalog, a purchase, and the
 * buyer's order.
 *
 * @module
 */
import { ScanAuthError } from '../errors'
import { pollSecretOf, requireBearer } from './request'
import type { RouteRun } from './route'
import { orderBody, plansBody, purchaseBody } from './wire'
import type { orderQuery, purchaseRequest } from './wire-schemas'

/** `GET plans`: the catalog, empty without payments. */
export const listPlans: RouteRun = async (_request, { auth }) => plansBody(auth.listPlans())

/** `POST purchase`: by scene (the need_purchase device) or by session. */
export const purchase: RouteRun<never, typeof purchaseRequest> = async (request, { auth }, input) => {
  const body = input.body(request)
  // Purchases are limited per address as scenes are (B-rate-11); an empty address is no address.
  const address = request.clientAddress
  const clientAddress = address === '' ? undefined : address
  // The need_purchase device holds no usable session: it names its scene, with the scene's poll
  // secret when it has one (B-order-13). Anyone else presents a session.
  if (body.scene !== undefined) {
    return purchaseBody(await auth.purchase({ sceneStr: body.scene, pollSecret: pollSecretOf(request), plan: body.plan, clientAddress }))
  }
  return purchaseBody(await auth.purchase({ sessionToken: requireBearer(request), plan: body.plan, clientAddress }))
}

/**
 * `GET order`: the buyer's own order only. A session purchase has no scene to wait on, so its
 * device asks here (B-order-11).
 */
export const getOrder: RouteRun<typeof orderQuery> = async (request, { auth }, input) => {
  const token = requireBearer(request)
  const { id } = input.query(request)
  const session = await auth.verifySession(token)
  if (session === null) throw new ScanAuthError('unauthorized', 'Session is unknown or has expired')
  const order = await auth.getOrder(id)
  // Another user's order is answered like an unknown one: an order id says nothing to a stranger.
  if (order === null || order.userId !== session.userId) throw new ScanAuthError('order_not_found', 'No order with that id for this session')
  return orderBody(order)
}
