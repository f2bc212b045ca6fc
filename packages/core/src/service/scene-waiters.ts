/**
 * Waiting for a scene to leave `pending` (docs/behaviour.md B-wait-1…4), for `waitForStatus`, the
 * long poll and the event stream. Waiters are grouped by scene: a change of a scene is read once for
 * all of its waiters. The store's change notifications wake them (one subscription per instance,
 * held only while someone waits), and a timer at the scene's deadline wakes them for its expiry,
 * which no commit announces.
 *
 * @module
 */
import type { StatusResult, WaitOptions } from './api'
import { ScanAuthError } from '../errors'
import type { Store } from '../store/contract'

/** The longest wait `waitForStatus` accepts: ten minutes. */
export const MAX_WAIT_MS = 600_000


/**
 * A wait's answer: the poll's answer, and the digest of the scene's poll secret read with it (so the
 * token can be withheld without another read, B-secret-2).
 */
export interface WaitAnswer {
  status: StatusResult
  pollSecretHash: string | null
}

/** What the waiters need from the service. */
export interface WaiterDeps {
  store: Pick<Store, 'watchScenes'>
  /**
   * The poll's answer for a scene, the deadline at which it changes by itself (the scene's, or the
   * open order's), and whether waiters keep waiting on it (`pending`; `need_purchase` with an open
   * order of the scene, B-order-7).
   */
  readStatus(sceneStr: string): Promise<WaitAnswer & { expiresAt: number; keepWaiting: boolean }>
  /** The service's clock. */
  now(): number
}

/** The waits of one scanauth instance. */
export interface SceneWaiters {
  /** Resolves with the poll's answer once it is not `pending`, or when `timeoutMs` has passed. */
  wait(sceneStr: string, options: WaitOptions): Promise<WaitAnswer>
  /** How many scenes are waited on now (0 once every wait has ended: nothing is left behind). */
  readonly watchedScenes: number
  /** Whether the store subscription is held (only while a scene is waited on). */
  readonly subscribed: boolean
}

/** How a wait ends: with an answer, or with an error (the scene is unknown, the store failed, aborted). */
type Outcome = { ok: true; answer: WaitAnswer } | { ok: false; error: unknown }

interface Waiter {
  settle(outcome: Outcome): void
  /** The status the waiter knows: from `seen`, else from its first read. */
  seen: StatusResult['status'] | undefined
}

/** One scene's waiters and the read that checks it. */
interface Watched {
  waiters: Set<Waiter>
  /** The read in progress, if any; `again` asks for one more after it (a change landed meanwhile). */
  reading: boolean
  again: boolean
  expiryTimer: NodeJS.Timeout | null
}

/** Creates the waiters of one instance. */
export function createSceneWaiters(deps: WaiterDeps): SceneWaiters {
  const watched = new Map<string, Watched>()
  let unsubscribe: (() => void) | null = null

  const release = (sceneStr: string, scene: Watched) => {
    if (scene.waiters.size > 0 || watched.get(sceneStr) !== scene) return
    if (scene.expiryTimer !== null) clearTimeout(scene.expiryTimer)
    watched.delete(sceneStr)
    if (watched.size === 0 && unsubscribe !== null) {
      unsubscribe()
      unsubscribe = null
    }
  }

  /** Reads the scene for all its waiters; settles them all once it has left `pending`. */
  const check = (sceneStr: string, scene: Watched): void => {
    if (scene.reading) {
      scene.again = true
      return
    }
    scene.reading = true
    void (async () => {
      try {
        do {
          scene.again = false
          const { status, pollSecretHash, expiresAt, keepWaiting } = await deps.readStatus(sceneStr)
          if (!keepWaiting) return settleAll(scene, { ok: true, answer: { status, pollSecretHash } })
          tellScanned(scene, { status, pollSecretHash })
          armExpiry(sceneStr, scene, expiresAt)
        } while (scene.again && scene.waiters.size > 0)
      } catch (error) {
        settleAll(scene, { ok: false, error })
      } finally {
        scene.reading = false
      }
    })()
  }

  /** `scanned` ends the waits that did not know it; the others wait for it to change (B-confirm-10). */
  const tellScanned = (scene: Watched, answer: WaitAnswer) => {
    const { status } = answer
    for (const waiter of [...scene.waiters]) {
      if (waiter.seen === undefined) waiter.seen = status.status
      else if (status.status === 'scanned' && waiter.seen !== 'scanned') waiter.settle({ ok: true, answer })
    }
  }

  const settleAll = (scene: Watched, outcome: Outcome) => {
    for (const waiter of [...scene.waiters]) waiter.settle(outcome)
  }

  /** A timer at the scene's deadline: expiry is noticed by reading (B-lazy-1), so a timer reads it. */
  const armExpiry = (sceneStr: string, scene: Watched, expiresAt: number) => {
    if (scene.expiryTimer !== null) return
    // Whole milliseconds past the deadline, so the read finds it passed (B-expiry-1).
    const delay = Math.max(0, expiresAt - deps.now())
    scene.expiryTimer = setTimeout(() => {
      scene.expiryTimer = null
      check(sceneStr, scene)
    }, Math.min(delay, MAX_WAIT_MS) + 1)
  }

  const onChange = (sceneStr: string) => {
    const scene = watched.get(sceneStr)
    if (scene !== undefined) check(sceneStr, scene)
  }

  return {
    wait(sceneStr, options) {
      const timeoutMs = options?.timeoutMs
      if (typeof timeoutMs !== 'number' || !Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_WAIT_MS) {
        return Promise.reject(new ScanAuthError('invalid_request', `timeoutMs must be an integer from 1 to ${MAX_WAIT_MS}`))
      }
      const signal = options.signal
      if (signal?.aborted) return Promise.reject(signal.reason)
      return new Promise<WaitAnswer>((resolve, reject) => {
        let scene = watched.get(sceneStr)
        if (scene === undefined) {
          scene = { waiters: new Set(), reading: false, again: false, expiryTimer: null }
          watched.set(sceneStr, scene)
        }
        const mine = scene
        let settled = false
        const waiter: Waiter = {
          seen: options.seen,
          settle(outcome) {
            if (settled) return
            settled = true
            clearTimeout(timer)
            signal?.removeEventListener('abort', onAbort)
            mine.waiters.delete(waiter)
            release(sceneStr, mine)
            if (outcome.ok) resolve(outcome.answer)
            else reject(outcome.error)
          },
        }
        const onAbort = () => waiter.settle({ ok: false, error: signal?.reason })
        // At the end of the wait, the answer as it is then (pending, unless a change was missed).
        // (Declared after `waiter`, whose settle() clears it: nothing can settle before this line.)
        const timer = setTimeout(() => {
          deps.readStatus(sceneStr).then(
            ({ status, pollSecretHash }) => waiter.settle({ ok: true, answer: { status, pollSecretHash } }),
            (error: unknown) => waiter.settle({ ok: false, error }),
          )
        }, timeoutMs)
        signal?.addEventListener('abort', onAbort, { once: true })
        mine.waiters.add(waiter)
        // Subscribe before the first read, so that a change committed in between is not missed.
        unsubscribe ??= deps.store.watchScenes(onChange)
        check(sceneStr, mine)
      })
    },
    get watchedScenes() {
      return watched.size
    },
    get subscribed() {
      return unsubscribe !== null
    },
  }
}
