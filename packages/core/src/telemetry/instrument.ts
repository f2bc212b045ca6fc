/**
 * The spans and metrics of a scanauth instance's operations, as a wrapper around the methods that
 * are not on the poll's hot path (the poll is instrumented in the service itself, without a wrapper
 * or a closure). With telemetry off, the instance is returned as it is.
 *
 * @module
 */
import type { ConsumeResult, ScanAuth, ScanResult, StatusResult } from '../service/api'
import type { ConfirmationDecisionResult } from '../service/confirm-api'
import type { Authorization } from '../service/views'
import { ATTR, SPAN } from './names'
import type { Describe, Telemetry } from './telemetry'

/** The sources scanauth itself grants; an application's own source strings are recorded as `other`. */
const KNOWN_SOURCES = new Set(['free', 'purchase', 'admin'])

const describeScan: Describe<ScanResult> = (result, span, telemetry) => {
  span?.setAttribute(ATTR.result, result.result)
  telemetry.count('scans', { result: result.result })
  if (result.result === 'authorized') telemetry.count('logins', { via: 'scan' })
}

const describeConfirmation: Describe<ConfirmationDecisionResult> = (result, span, telemetry) => {
  span?.setAttribute(ATTR.result, result.result)
  telemetry.count('confirmations', { result: result.result })
  if (result.result === 'authorized') telemetry.count('logins', { via: 'confirm' })
}

const describeStatus: Describe<StatusResult> = (result, span) => {
  span?.setAttribute(ATTR.status, result.status)
}

const describeAuthorization: Describe<Authorization> = (result, span) => {
  if (span === null) return
  span.setAttribute(ATTR.authorizationType, result.type)
  span.setAttribute(ATTR.authorizationStatus, result.status)
  span.setAttribute(ATTR.authorizationSource, KNOWN_SOURCES.has(result.source) ? result.source : 'other')
}

const describeConsume: Describe<ConsumeResult> = (result, span) => {
  if (span === null) return
  span.setAttribute(ATTR.result, result.status)
  if (result.status === 'ok') span.setAttribute(ATTR.authorizationType, result.authorization.type)
}

/** `auth` with its operations in spans and metrics (docs/operations.md, "Traces and metrics"). */
export function instrument(auth: ScanAuth, telemetry: Telemetry): ScanAuth {
  if (!telemetry.enabled) return auth
  return {
    ...auth,
    createScene: (input) => telemetry.operation(SPAN.createScene, () => auth.createScene(input), null),
    handleScan: (input) => telemetry.operation(SPAN.scan, () => auth.handleScan(input), describeScan),
    // Not active: the store subscription a wait may open serves later waits too.
    waitForStatus: (sceneStr, options) => telemetry.detached(SPAN.wait, () => auth.waitForStatus(sceneStr, options), describeStatus),
    decideConfirmation: (input) => telemetry.operation(SPAN.confirm, () => auth.decideConfirmation(input), describeConfirmation),
    grant: (input) => telemetry.operation(SPAN.grant, () => auth.grant(input), describeAuthorization),
    consume: (input) => telemetry.operation(SPAN.consume, () => auth.consume(input), describeConsume),
    consumeForRequest: (input) => telemetry.operation(SPAN.consume, () => auth.consumeForRequest(input), (r, span, t) => describeConsume(r.result, span, t)),
    revokeAuthorization: (input) => telemetry.operation(SPAN.revoke, () => auth.revokeAuthorization(input), describeAuthorization),
    purchase: (input) =>
      telemetry.operation(
        SPAN.purchase,
        () => auth.purchase(input),
        // Only once it succeeded is the plan known to be a catalog id rather than whatever the client sent.
        (_result, span) => {
          span?.setAttribute(ATTR.plan, input.plan)
          span?.setAttribute(ATTR.purchaseBy, input.sceneStr !== undefined ? 'scene' : 'session')
        },
      ),
    // A plans page's form with a plan is a purchase on the phone (B-phone-5); without one it only shows the plans again.
    choosePhonePlan: (input) =>
      input.plan === undefined || input.plan === ''
        ? auth.choosePhonePlan(input)
        : telemetry.operation(SPAN.purchase, () => auth.choosePhonePlan(input), (_result, span) => {
            span?.setAttribute(ATTR.plan, input.plan as string)
            span?.setAttribute(ATTR.purchaseBy, 'phone')
          }),
  }
}
