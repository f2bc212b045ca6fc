/**
 * `createScanAuth`: the thin shell around the pure operations. Each call validates its input, loads
 * what it needs, asks an operation for a plan, and commits the plan's change set. When the commit
 * reports a conflict (another writer changed the scene or user since it was loaded), it loads and
 * plans again, a bounded number of times.
 *
 * @module
 */
import type { ScanAuth } from './api'
import { ScanAuthError } from './errors'
import { activationsIn } from './hooks-activations'
import { planGrant, type GrantSpec } from './operations/grant'
import type { Plan } from './operations/plan'
import { planAuthorizedPoll, planPoll } from './operations/poll'
import { planScan } from './operations/scan'
import { planConsume, planVerifySession, isLiveSession } from './operations/session'
import type { Lifetimes } from './operations/settings'
import { resolveOptions, type ResolvedOptions, type ScanAuthOptions } from './options'
import { newSceneStr, newSessionToken, SCENE_STR_PATTERN } from './random'
import type { UserAggregate } from './records'
import { newScene } from './rules/scene'
import { DAY, HOUR, SECOND } from './rules/time'
import type { Store } from './store'
import { consumeInput, createSceneInput, grantInput, parseInput, scanInput } from './validation'

/** How many times one operation loads and plans again after losing a commit race. */
const MAX_ATTEMPTS = 100

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

  return {
    async createScene(input) {
      const { deviceId } = parseInput(createSceneInput, input)
      const sceneStr = newSceneStr()
      let url: string
      try {
        ;({ url } = await qr.createQr({ sceneStr, expiresInSeconds: config.sceneTtlSeconds }))
        if (typeof url !== 'string' || url === '') throw new Error('the platform returned no QR code address')
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error)
        throw new ScanAuthError('qr_creation_failed', `QR code creation failed: ${reason}`, { cause: error })
      }
      const result = await store.commit({ scene: { op: 'insert', scene: newScene({ sceneStr, deviceId, now: now(), ttlMs: lifetimes.sceneMs }) } })
      // 128 random bits make a collision practically impossible; say so plainly if it ever happens.
      if (!result.ok) throw new ScanAuthError('conflict', 'scene_str collision, try again')
      return { sceneStr, qrUrl: url, expiresIn: config.sceneTtlSeconds }
    },

    async getStatus(sceneStr) {
      if (typeof sceneStr !== 'string' || sceneStr === '') throw new ScanAuthError('invalid_request', 'scene is required')
      // A string that cannot be a scene_str names no scene: answer without a read.
      if (!SCENE_STR_PATTERN.test(sceneStr)) throw new ScanAuthError('scene_not_found', 'Scene does not exist')
      // The hottest path, a pending poll, is this one read and an answer: no commit loop around it.
      let { scene } = await store.load({ sceneStr })
      if (scene === null) throw new ScanAuthError('scene_not_found', 'Scene does not exist')
      const first = planPoll(scene, now())
      if (!('authorizedFor' in first) && first.changes === null) return first.finish(null)
      return commitLoop(async () => {
        // The first round reuses the scene just read; a round after a conflict reads it again.
        scene ??= (await store.load({ sceneStr })).scene
        if (scene === null) throw new ScanAuthError('scene_not_found', 'Scene does not exist')
        const at = now()
        const decided = planPoll(scene, at)
        const sceneId = scene.id
        scene = null
        if (!('authorizedFor' in decided)) return { user: null, plan: decided }
        const loaded = await store.load({ userId: decided.authorizedFor, latestSessionOfScene: sceneId })
        return { user: loaded.user, plan: planAuthorizedPoll({ user: loaded.user, latestSession: loaded.latestSession, now: at }) }
      })
    },

    async handleScan(input) {
      const { sceneStr, openid } = parseInput(scanInput, input)
      const sessionToken = newSessionToken()
      const result = await commitLoop(async () => {
        const loaded = SCENE_STR_PATTERN.test(sceneStr)
          ? await store.load({ sceneStr, openid })
          : { scene: null, user: null }
        return { user: loaded.user, plan: planScan({ scene: loaded.scene, user: loaded.user, openid, sessionToken, now: now(), lifetimes }) }
      })
      callHook(config, () => config.hooks.onScan?.({ sceneStr, openid, ...result }))
      return result
    },

    async grant(input) {
      const { userId, openid, ...what } = parseInput(grantInput, input)
      // Exactly one of the two is set (validated); a key present with `undefined` counts as absent.
      const target = userId !== undefined ? { userId } : { openid: openid as string }
      const spec = { ...target, ...what, source: what.source ?? 'admin' } as GrantSpec
      return commitLoop(async () => {
        const { user } = await store.load(target)
        return { user, plan: planGrant({ spec, user, now: now() }) }
      })
    },

    async consume(input) {
      const { sessionToken, points } = parseInput(consumeInput, input)
      return commitLoop(async () => {
        const at = now()
        const { session, user } = await loadSessionUser(store, sessionToken, at)
        return { user, plan: planConsume({ session, user, points, now: at }) }
      })
    },

    async verifySession(token) {
      if (typeof token !== 'string' || token === '') return null
      return commitLoop(async () => {
        const at = now()
        const { session, user } = await loadSessionUser(store, token, at)
        return { user, plan: planVerifySession({ session, user, now: at }) }
      })
    },
  }
}

/** The session behind a token and, when it is live, its user (two reads: the token names no user). */
async function loadSessionUser(store: Store, token: string, at: number) {
  const { session } = await store.load({ sessionToken: token })
  if (!isLiveSession(session, at)) return { session: null, user: null }
  const { user } = await store.load({ userId: session.userId })
  return { session, user }
}

/** One attempt of an operation: the user it loaded (for the activation hook) and its plan. */
interface Attempt<R> {
  user: UserAggregate | null
  plan: Plan<R>
}

/** Load → plan → commit, again on conflict, until it commits or `MAX_ATTEMPTS` is reached. */
function makeCommitLoop(store: Store, config: ResolvedOptions) {
  return async function commitLoop<R>(attempt: () => Promise<Attempt<R>>): Promise<R> {
    for (let round = 0; round < MAX_ATTEMPTS; round++) {
      const { user, plan } = await attempt()
      if (plan.changes === null) return plan.finish(null)
      const outcome = await store.commit(plan.changes)
      if (outcome.ok) {
        const result = plan.finish(outcome.ids)
        if (config.hooks.onActivate) {
          for (const authorization of activationsIn(user, plan.changes, outcome.ids)) {
            callHook(config, () => config.hooks.onActivate?.({ authorization }))
          }
        }
        return result
      }
      // Someone else won this aggregate: wait a little (jittered, growing) and plan again on fresh data.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(25, 1 + round)))
    }
    throw new ScanAuthError('conflict', 'Too many concurrent changes to the same scene or user; nothing was changed')
  }
}

/** Calls a hook; a throwing hook never fails the operation that already committed. */
function callHook(config: ResolvedOptions, call: () => void): void {
  try {
    call()
  } catch (error) {
    try {
      config.hooks.onHookError?.(error)
    } catch {
      // A failing error hook has nowhere left to report to.
    }
  }
}
