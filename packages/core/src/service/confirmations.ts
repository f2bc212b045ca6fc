/**
 * Confirm on the phone (`confirm: 'link'`, docs/behaviour.md B-confirm-1…12): the scan that moves a
 * scene to `scanned`, the confirm page's two steps (who opened the link; the decision), all over the
 * same load → plan → commit cycle as the rest of the service. The rules live in `rules/confirm.ts`.
 *
 * @module
 */
import type { ScanAuth, ScanResult } from './api'
import type { CommitLoop } from './commit-loop'
import type { ConfirmationDecisionResult, ConfirmationStep, ConfirmationView, WebOAuthProvider } from './confirm-api'
import { ScanAuthError } from '../errors'
import { answer, changeSet, type Plan } from '../operations/plan'
import { planScanTransaction } from '../operations/scan'
import type { Lifetimes } from '../operations/settings'
import { newSecret } from './random'
import type { SceneRecord } from '../store/records'
import {
  denyScene,
  digestSecret,
  displayLabel,
  isWaitingFor,
  matchesDigest,
  oauthStateOf,
  reissueTicket,
  scanForConfirmation,
  SECRET_PATTERN,
  ticketState,
  withCsrf,
} from '../rules/confirm'
import { decideScan } from '../rules/scene'
import { newSessionToken } from './random'
import type { Store } from '../store/contract'
import { confirmationDecisionInput, confirmationOpenInput, parseInput } from './validation'

/** What the confirmation operations share with the rest of the service. */
export interface ConfirmationContext {
  store: Store
  now: () => number
  commitLoop: CommitLoop
  lifetimes: Lifetimes
  /** `confirmation.url`, the public address of the page (or what answers it), if set. */
  url: string | (() => string) | undefined
  oauth: WebOAuthProvider | undefined
  ticketTtlMs: number
}

type ConfirmationMethods = Pick<ScanAuth, 'openConfirmation' | 'decideConfirmation'> & {
  /** A scan in `confirm: 'link'` mode (B-confirm-1…3). */
  scanForConfirmation(sceneStr: string, openid: string): Promise<ScanResult>
}

export function confirmationMethods(context: ConfirmationContext): ConfirmationMethods {
  const { store, now, commitLoop } = context

  /** The confirm page's address with the ticket: where the reply links and where WeChat comes back. */
  const linkOf = (ticket: string): string | undefined => {
    if (context.url === undefined) return undefined
    const url = new URL(typeof context.url === 'function' ? context.url() : context.url)
    url.searchParams.set('ticket', ticket)
    return url.toString()
  }

  /** The page and OAuth must both be configured before anything is read. */
  const requireConfigured = (): { oauth: WebOAuthProvider } => {
    if (context.url === undefined || context.oauth === undefined) {
      throw new ScanAuthError('confirm_not_configured', 'Confirm on the phone is not set up on this server')
    }
    return { oauth: context.oauth }
  }

  /**
   * The scene a ticket names, still waiting for its decision; otherwise the error that says why
   * (B-confirm-4). A ticket found expired is marked so on the way (like a poll would).
   */
  async function openScene(ticket: string): Promise<SceneRecord> {
    if (!SECRET_PATTERN.test(ticket)) throw new ScanAuthError('confirm_ticket_invalid', 'This confirm link is not valid')
    const ticketHash = digestSecret(ticket)
    const loaded = (await store.load({ confirmTicketHash: ticketHash })).scene
    // Only the scene's current ticket counts: one replaced by a new scan names nothing (B-confirm-3).
    const scene = loaded?.confirmation?.ticketHash === ticketHash ? loaded : null
    const state = ticketState(scene, now())
    switch (state.kind) {
      case 'open':
        return state.scene
      case 'unknown':
        throw new ScanAuthError('confirm_ticket_invalid', 'This confirm link is not valid')
      case 'used':
        throw new ScanAuthError('confirm_ticket_used', 'This sign-in request was already answered')
      case 'expired':
        if (state.expire !== null && scene !== null) await store.commit({ scene: { op: 'update', scene: state.expire, expectedVersion: scene.version } })
        throw new ScanAuthError('confirm_ticket_expired', 'This sign-in request has expired; show a new code on the device')
    }
  }

  /** The scan's answer: the device, the ticket, its link and when it expires. */
  const scannedResult = (scene: SceneRecord, ticket: string, expiresAt: number): ScanResult => {
    const confirmUrl = linkOf(ticket)
    return { result: 'scanned', deviceId: scene.deviceId, ticket, expiresAt, ...(confirmUrl === undefined ? {} : { confirmUrl }) }
  }

  const viewOf = (scene: SceneRecord, at: number): ConfirmationView => ({
    deviceLabel: displayLabel(scene.deviceId),
    requestedFrom: scene.requestedFrom,
    ageSeconds: Math.max(0, Math.floor((at - scene.createdAt) / 1000)),
    expiresAt: scene.expiresAt,
  })

  return {
    async scanForConfirmation(sceneStr, openid) {
      const ticket = newSecret()
      const ticketHash = digestSecret(ticket)
      return commitLoop(async () => {
        const { scene } = await store.load({ sceneStr })
        const at = now()
        // The scanner scanning again while the decision waits: the reply (the only place the ticket
        // goes) may have been lost, so a fresh ticket replaces the old one (B-confirm-3).
        if (scene !== null && isWaitingFor(scene, openid, at)) {
          const reissued = reissueTicket(scene, ticketHash)
          const result = scannedResult(scene, ticket, reissued.expiresAt)
          return { user: null, plan: answer(result, changeSet({ scene: { op: 'update', scene: reissued, expectedVersion: scene.version } })) }
        }
        const decision = decideScan(scene, at, 'link')
        let plan: Plan<ScanResult>
        if (decision.kind === 'invalid') {
          const expire = decision.expire && scene ? { op: 'update' as const, scene: decision.expire, expectedVersion: scene.version } : undefined
          plan = answer({ result: 'invalid' }, changeSet({ scene: expire }))
        } else {
          const scanned = scanForConfirmation(decision.scene, { openid, ticketHash, now: at, ttlMs: context.ticketTtlMs })
          const result = scannedResult(decision.scene, ticket, scanned.expiresAt)
          plan = answer(result, changeSet({ scene: { op: 'update', scene: scanned, expectedVersion: decision.scene.version } }))
        }
        return { user: null, plan }
      })
    },

    async openConfirmation(input) {
      const { oauth } = requireConfigured()
      const { ticket, code, state } = parseInput(confirmationOpenInput, input)
      const scene = await openScene(ticket)
      if (code === undefined) {
        // First visit: ask WeChat who this is; it comes back here with a code and our state.
        if (state !== undefined) throw new ScanAuthError('invalid_request', 'WeChat came back without a code: open the link again')
        const redirectUri = linkOf(ticket) as string
        return { step: 'authorize', location: oauth.authorizeUrl({ redirectUri, state: oauthStateOf(ticket) }) }
      }
      if (state !== oauthStateOf(ticket)) throw new ScanAuthError('invalid_request', 'The sign-in state does not match this link: open the link again')
      let openid: string | null
      try {
        openid = await oauth.exchangeCode(code)
      } catch (error) {
        throw new ScanAuthError('confirm_oauth_failed', 'WeChat could not be asked who you are; try again in a moment', { cause: error })
      }
      if (openid === null) throw new ScanAuthError('confirm_oauth_refused', 'WeChat refused this sign-in code: open the link again')
      if (openid !== scene.confirmation?.scannedBy) {
        throw new ScanAuthError('confirm_wrong_user', 'Only the person who scanned the code can answer this request')
      }
      const csrf = newSecret()
      // The digest of the page's CSRF token goes on the scene: only the page shown last can decide (B-confirm-7).
      const shown = await commitLoop(async (round) => {
        const current = round === 0 ? scene : await openScene(ticket)
        if (current.confirmation?.scannedBy !== openid) throw new ScanAuthError('confirm_wrong_user', 'Only the person who scanned the code can answer this request')
        const write = { op: 'update' as const, scene: withCsrf(current, digestSecret(csrf)), expectedVersion: current.version }
        return { user: null, plan: answer(current, changeSet({ scene: write })) }
      })
      const step: ConfirmationStep = { step: 'decide', ticket, csrf, view: viewOf(shown, now()) }
      return step
    },

    async decideConfirmation(input) {
      requireConfigured()
      const { ticket, csrf, decision } = parseInput(confirmationDecisionInput, input)
      const sessionToken = newSessionToken()
      return commitLoop<ConfirmationDecisionResult>(async () => {
        const scene = await openScene(ticket)
        // The token of the page last shown to the verified scanner, and nothing else (B-confirm-7).
        if (!matchesDigest(csrf, scene.confirmation?.csrfHash ?? null)) {
          throw new ScanAuthError('confirm_csrf_invalid', 'This form is out of date: open the link again')
        }
        const deviceLabel = displayLabel(scene.deviceId)
        if (decision === 'deny') {
          const write = { op: 'update' as const, scene: denyScene(scene), expectedVersion: scene.version }
          return { user: null, plan: answer<ConfirmationDecisionResult>({ result: 'denied', deviceLabel }, changeSet({ scene: write })) }
        }
        const openid = (scene.confirmation as NonNullable<SceneRecord['confirmation']>).scannedBy
        const { user } = await store.load({ openid })
        const plan = planScanTransaction({ scene, user, openid, sessionToken, now: now(), lifetimes: context.lifetimes })
        return {
          user,
          plan: { changes: plan.changes, finish: (ids) => ({ ...plan.finish(ids), deviceLabel }) },
        }
      })
    },
  }
}
