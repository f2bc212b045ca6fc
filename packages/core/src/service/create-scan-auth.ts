/**
 * `createScanAuth`: the thin shell around the pure operations. Each call validates its input, loads
 * what it needs, asks an operation for a plan, and commits the plan's change set. When the commit
 * reports a conflict (another writer changed the scene or user since it was loaded), it loads and
 * plans again, a bounded number of times.
 *
 * @module
 */
import type { ScanAuth, ScanResult, StatusResult } from './api'
import { callHook, makeCommitLoop } from './commit-loop'
import { entitlementMethods } from './entitlements'
import { ScanAuthError } from '../errors'
import { planAuthorizedPoll, planPoll } from '../operations/poll'
import { planScan } from '../operations/scan'
import { planVerifySession, isLiveSession } from '../operations/session'
import type { Lifetimes } from '../operations/settings'
import { resolveOptions, type ScanAuthOptions } from './options'
import { createPollCeiling } from './poll-ceiling'
import { createPurchaseLimiter, createSceneLimiter } from './rate-limiter'
import { newSceneStr, newSessionToken, SCENE_STR_PATTERN } from './random'
import type { SceneRecord } from '../store/records'
import { newScene } from '../rules/scene'
import { DAY, HOUR, SECOND } from '../rules/time'
import { createSceneWaiters, type WaitAnswer } from './scene-waiters'
import { userOfSessionFallback } from './session-user'
import { createSceneInput, parseInput, scanInput } from './validation'
import { hasOrderMethods, type OrderContext } from '../orders/context'
import { orderMethods } from '../orders/methods'
import { purchaseMethods } from '../orders/purchase'
import { PHONE_PAY_OFF, phoneMethods, type PhoneMethods } from '../phone/pages'
import { reminderMethods } from '../reminders/methods'
import { confirmationMethods } from './confirmations'
import { digestSecret, maskAddress, matchesDigest } from '../rules/confirm'
import { newSecret } from './random'
import type { UserAggregate } from '../store/records'
import { instrument } from '../telemetry/instrument'
import { Telemetry } from '../telemetry/telemetry'

/**
 * Creates a scanauth instance over a store and a QR provider.
 *
 * @example
 * ```ts
 * import { createScanAuth, MemoryStore } from '@scanauth/core'
 *
 * const auth = createScanAuth({
 *   store: new MemoryStore(),
 *   qr: { createQr: async ({ sceneStr }) => ({ url: `https://example.test/qr/${sceneStr}` }) },
 * })
 * const { sceneStr, qrUrl } = await auth.createScene({ deviceId: 'tv-livingroom' })
 * ```
 *
 * @throws ScanAuthError `invalid_options` when an option is missing or out of range; the message names it.
 */
export function createScanAuth(options: ScanAuthOptions): ScanAuth {
  const config = resolveOptions(options)
  const { store, qr, now } = config
  // Whole milliseconds, so every backend stores integers (fractional hours or days are allowed).
  const lifetimes: Lifetimes = {
    sceneMs: config.sceneTtlSeconds * SECOND,
    sessionMs: Math.round(config.sessionTtlHours * HOUR),
    freeTrialMs: Math.round(config.freeTrialDays * DAY),
  }
  const commitLoop = makeCommitLoop(store, config)
  // Spans and metrics (docs/operations.md): the global OpenTelemetry API once loaded, or the option's.
  const telemetry = config.telemetry === false ? Telemetry.off : new Telemetry(config.telemetry)
  if (config.payments !== undefined && !hasOrderMethods(store)) {
    throw new ScanAuthError('invalid_options', 'createScanAuth: store must implement loadOrder(), saveOrder() and listOpenOrders() when payments are configured')
  }
  const entitlements = entitlementMethods({ store, now, commitLoop })
  const orderContext: OrderContext | null =
    config.payments === undefined || !hasOrderMethods(store)
      ? null
      : {
          store,
          now,
          commitLoop,
          payments: config.payments,
          hooks: config.hooks,
          callHook: (call) => callHook(config, call),
          revokeAuthorization: entitlements.revokeAuthorization,
          limitPurchase: createPurchaseLimiter(store, config.rateLimits, now),
        }
  const orders = orderMethods(orderContext)
  // Reminders before access ends (B-remind-1…10), and the "remind me" link they are offered by.
  const reminders = reminderMethods({ store, now, config, telemetry })
  // Selling on the phone that scanned (B-phone-1…10): the order operations, reached from phone pages.
  const phone: PhoneMethods | null =
    orderContext === null || orderContext.payments.phone === undefined
      ? null
      : phoneMethods({
          store: orderContext.store,
          now,
          phone: orderContext.payments.phone,
          listPlans: orders.listPlans,
          getUser: entitlements.getUser,
          queryOrder: (outTradeNo) => orderContext.payments.provider.queryOrder(outTradeNo),
          purchaseJsapi: purchaseMethods(orderContext, orders.applyPayment).purchaseJsapi,
          applyPayment: orders.applyPayment,
          remindMeUrl: reminders.remindMeUrl,
        })
  const limitScene = createSceneLimiter(store, config.rateLimits, now)
  const confirmations = confirmationMethods({
    store,
    now,
    commitLoop,
    lifetimes,
    url: config.confirmation.url,
    oauth: config.confirmation.oauth,
    ticketTtlMs: config.confirmation.ticketTtlSeconds * SECOND,
  })
  const { statusPollsPerScene } = config.rateLimits
  const countPoll = statusPollsPerScene === false ? null : createPollCeiling(statusPollsPerScene)

  /** The scene by its scene_str, or `scene_not_found` (404). */
  async function loadScene(sceneStr: string): Promise<SceneRecord> {
    const { scene } = await store.load({ sceneStr })
    if (scene === null) throw new ScanAuthError('scene_not_found', 'Scene does not exist')
    return scene
  }

  /**
   * The checks of a poll's scene_str before anything else (no read, no subscription): required,
   * and a string that cannot be a scene_str names no scene.
   */
  function checkSceneStr(sceneStr: unknown): asserts sceneStr is string {
    if (typeof sceneStr !== 'string' || sceneStr === '') throw new ScanAuthError('invalid_request', 'scene is required')
    if (!SCENE_STR_PATTERN.test(sceneStr)) throw new ScanAuthError('scene_not_found', 'Scene does not exist')
  }

  /**
   * The session token goes only to a call that presents the scene's poll secret, when the scene has
   * one (B-secret-2); every other answer carries no secret and is given to anyone.
   */
  function guardSecret(status: StatusResult, pollSecretHash: string | null, pollSecret: string | undefined): StatusResult {
    if (status.status !== 'authorized' || pollSecretHash === null || matchesDigest(pollSecret, pollSecretHash)) return status
    throw new ScanAuthError('poll_secret_required', 'This scene was created with a poll secret: present it as X-Scanauth-Poll-Secret to receive the session token')
  }

  /** A poll's answer (docs/behaviour.md B-poll-1…5), with the scene's deadline for the waiters; `sceneStr` passed {@link checkSceneStr}. */
  async function readStatus(sceneStr: string): Promise<{ status: StatusResult; expiresAt: number; pollSecretHash: string | null }> {
    const scene = await loadScene(sceneStr)
    const { pollSecretHash } = scene
    const first = planPoll(scene, now(), config.confirm)
    // The hottest path, a pending poll, is this one read and an answer: no commit loop around it.
    if (first.kind === 'answer' && first.plan.changes === null) return { status: first.plan.finish(null), expiresAt: scene.expiresAt, pollSecretHash }
    let user: UserAggregate | null = null
    const status = await commitLoop(async (round) => {
      // Round 0 decides on the scene just read; a round after a lost race reads it again.
      const current = round === 0 ? scene : await loadScene(sceneStr)
      const at = now()
      const step = planPoll(current, at, config.confirm)
      if (step.kind === 'answer') return { user: null, plan: step.plan }
      const loaded = await store.load({ userId: step.userId, latestSessionOfScene: current.id })
      user = loaded.user
      return { user: loaded.user, plan: planAuthorizedPoll({ user: loaded.user, latestSession: loaded.latestSession, now: at }) }
    })
    // The first answer of this instance that gives the device access: scanauth.scan_to_device.
    if (status.status === 'authorized') telemetry.sceneAuthorized(sceneStr, scene.authorizedAt, user, now())
    return { status, expiresAt: scene.expiresAt, pollSecretHash }
  }

  /**
   * A poll's answer for the waiters: `need_purchase` is final unless an order opened for the scene
   * is open and within its deadline, which the device then waits on (B-order-7). The order is read
   * only on that answer, so a pending wait costs what it did.
   */
  async function readForWait(sceneStr: string): Promise<WaitAnswer & { expiresAt: number; keepWaiting: boolean }> {
    const read = await readStatus(sceneStr)
    // `scanned` is news to a waiter that has not seen it, and waited on by one that has (B-confirm-10).
    if (read.status.status === 'pending' || read.status.status === 'scanned') return { ...read, keepWaiting: true }
    if (read.status.status !== 'need_purchase' || orderContext === null) return { ...read, keepWaiting: false }
    const order = await orders.openOrderOfScene(sceneStr)
    if (order !== null) return { ...read, expiresAt: Date.parse(order.expiresAt), keepWaiting: true }
    // No open order: it may have been paid between the two reads (the grant commits before the order
    // is marked paid), so read again before need_purchase counts as final (B-order-7).
    return { ...(await readStatus(sceneStr)), keepWaiting: false }
  }

  const waiters = createSceneWaiters({ store, readStatus: readForWait, now })

  return instrument({
    async createScene(input) {
      const { deviceId, clientAddress } = parseInput(createSceneInput, input)
      // Before the platform is asked: a refused call spends no quota and stores nothing (B-rate-1).
      await limitScene({ deviceId, clientAddress })
      const sceneStr = newSceneStr()
      let url: string
      let content: unknown
      try {
        ;({ url, content } = await qr.createQr({ sceneStr, expiresInSeconds: config.sceneTtlSeconds }))
        if (typeof url !== 'string' || url === '') throw new Error('the platform returned no QR code address')
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error)
        throw new ScanAuthError('qr_creation_failed', `QR code creation failed: ${reason}`, { cause: error })
      }
      // The masked address is kept only where the confirm page shows it (B-confirm-5); the poll
      // secret only as its digest, the secret itself is shown once, here (B-secret-1).
      const requestedFrom = config.confirm === 'link' ? maskAddress(clientAddress) : null
      const pollSecret = config.requirePollSecret ? newSecret() : undefined
      const draft = newScene({ sceneStr, deviceId, now: now(), ttlMs: lifetimes.sceneMs, requestedFrom, pollSecretHash: pollSecret === undefined ? null : digestSecret(pollSecret) })
      const result = await store.commit({ scene: { op: 'insert', scene: draft } })
      // 128 random bits make a collision practically impossible; say so plainly if it ever happens.
      if (!result.ok) throw new ScanAuthError('conflict', 'scene_str collision, try again')
      // Optional: without a content (or with an empty one) the answer, and so the wire body, keeps its three fields.
      const answer = typeof content === 'string' && content !== ''
        ? { sceneStr, qrUrl: url, qrContent: content, expiresIn: config.sceneTtlSeconds }
        : { sceneStr, qrUrl: url, expiresIn: config.sceneTtlSeconds }
      return pollSecret === undefined ? answer : { ...answer, pollSecret }
    },

    async getStatus(sceneStr, options) {
      // Instrumented here rather than by a wrapper: no closure and no span for a pending answer.
      if (telemetry.loading !== null) await telemetry.loading
      const started = telemetry.pollStarted()
      try {
        checkSceneStr(sceneStr)
        // In memory, before the read: the ceiling adds no store round trip to a pending poll (B-rate-9).
        countPoll?.(sceneStr, now())
        const read = await readStatus(sceneStr)
        return telemetry.polled(started, guardSecret(read.status, read.pollSecretHash, options?.pollSecret))
      } catch (error) {
        throw telemetry.pollFailed(started, error)
      }
    },

    async waitForStatus(sceneStr, options) {
      // Before the wait subscribes: a string that names no scene costs no subscription.
      checkSceneStr(sceneStr)
      // A long poll counts against the ceiling like a poll (B-rate-9); the waiters' own reads do not.
      countPoll?.(sceneStr, now())
      const { status, pollSecretHash } = await waiters.wait(sceneStr, options)
      // The digest came with the read that answered: withholding the token costs no read (B-secret-2).
      return guardSecret(status, pollSecretHash, options?.pollSecret)
    },

    async handleScan(input) {
      const { sceneStr, openid } = parseInput(scanInput, input)
      if (config.confirm === 'link') {
        // A string that cannot be a scene_str names no scene: `invalid` without a read.
        const result: ScanResult = SCENE_STR_PATTERN.test(sceneStr) ? await confirmations.scanForConfirmation(sceneStr, openid) : { result: 'invalid' }
        callHook(config, () => config.hooks.onScan?.({ sceneStr, openid, result: result.result }))
        return result
      }
      const sessionToken = newSessionToken()
      // Selling on the phone: a scan that ends in need_purchase leaves this ticket on its scene (B-phone-2).
      const ticket = phone?.newTicket()
      const planned = await commitLoop(async () => {
        // A string that cannot be a scene_str names no scene: `invalid` without a read.
        const loaded = SCENE_STR_PATTERN.test(sceneStr)
          ? await store.load({ sceneStr, openid })
          : { scene: null, user: null }
        const input = { scene: loaded.scene, user: loaded.user, openid, sessionToken, now: now(), lifetimes }
        return { user: loaded.user, plan: planScan(ticket === undefined ? input : { ...input, phoneTicketHash: ticket.ticketHash }) }
      })
      let result: ScanResult = planned.result === 'need_purchase' && phone !== null && ticket !== undefined ? { ...planned, payUrl: phone.payUrlOf(ticket.ticket) } : planned
      // A scan that signs in offers the "remind me before it ends" link, when there is one (B-remind-6).
      if (result.result === 'authorized' && reminders.reminderSubscription) {
        const remindUrl = await reminders.remindMeUrl(openid)
        if (remindUrl !== null) result = { ...result, remindUrl }
      }
      // The hook hears what the scan came to, never the ticket's link (it may be logged).
      callHook(config, () => config.hooks.onScan?.({ sceneStr, openid, ...planned }))
      return result
    },

    async verifySession(token) {
      if (typeof token !== 'string' || token === '') return null
      return commitLoop(async () => {
        const at = now()
        // The session and its user in one load, one round trip on a networked store (B-load-2):
        // every guarded request of the app runs this.
        const { session, user } = await store.load({ sessionToken: token, userOfSession: true })
        if (!isLiveSession(session, at)) return { user: null, plan: planVerifySession({ session: null, user: null, now: at }) }
        const owner = user ?? (await userOfSessionFallback(store, session.userId))
        return { user: owner, plan: planVerifySession({ session, user: owner, now: at }) }
      })
    },

    confirmMode: config.confirm,
    openConfirmation: confirmations.openConfirmation,

    async decideConfirmation(input) {
      let result = await confirmations.decideConfirmation(input)
      // The scanner is on the confirm page already: it offers the plans at once (B-phone-8).
      if (result.result === 'need_purchase' && phone !== null && result.userId !== undefined) {
        result = { ...result, payment: await phone.plansAfterConfirmation({ userId: result.userId, ticket: input.ticket }) }
      }
      // The decision is the end of the scan (B-confirm-7): the hook hears what it came to.
      callHook(config, () => config.hooks.onConfirm?.({ result: result.result, ...(result.userId === undefined ? {} : { userId: result.userId }) }))
      return result
    },

    phonePay: phone !== null,
    sendReminders: reminders.sendReminders,
    reminderSubscription: reminders.reminderSubscription,
    remindMeUrl: reminders.remindMeUrl,
    acceptSubscription: reminders.acceptSubscription,
    openPhonePay: (phone ?? PHONE_PAY_OFF).openPhonePay,
    choosePhonePlan: (phone ?? PHONE_PAY_OFF).choosePhonePlan,
    openPhoneOrder: (phone ?? PHONE_PAY_OFF).openPhoneOrder,

    ...entitlements,
    ...orders,
  }, telemetry)
}


