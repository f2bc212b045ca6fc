/**
 * The authorization state machine (docs/behaviour.md, B-auth-1…7) and the activation
 * step, as pure functions over one user's live authorizations. No I/O, no clock.
 *
 * They work on drafts: an authorization that may not have an id yet (created in this operation) and
 * that remembers whether it changed, so the caller can turn the result into a change set.
 */
import type { AuthorizationRecord, AuthorizationType } from '../store/records'
import { hasPassed } from './time'

/** An authorization being planned: `id` is null until the store assigns one at commit. */
export type AuthorizationDraft = Omit<AuthorizationRecord, 'id' | 'userId'> & {
  id: number | null
  /** True when this draft differs from what was loaded (always true for a new one). */
  changed: boolean
}

/** A loaded authorization as an unchanged draft. */
export function draftOf(record: AuthorizationRecord): AuthorizationDraft {
  const { userId: _owner, ...rest } = record
  return { ...rest, changed: false }
}

/**
 * Whether an authorization counts as valid now: a time one while `now` is before end_at (null end_at
 * is never valid), a points one while it has points left.
 */
export function isValid(a: Pick<AuthorizationRecord, 'type' | 'endAt' | 'remainingPoints'>, now: number): boolean {
  if (a.type === 'time') return a.endAt !== null && !hasPassed(a.endAt, now)
  return a.remainingPoints > 0
}

/**
 * FIFO order (B-fifo-1): created_at, then id; a new draft (no id yet) comes after every stored one,
 * in creation order. Stores sort the authorizations of a load with it too.
 */
export function fifoOrder(a: { createdAt: number; id: number | null }, b: { createdAt: number; id: number | null }): number {
  if (a.createdAt !== b.createdAt) return a.createdAt - b.createdAt
  return (a.id ?? Number.MAX_SAFE_INTEGER) - (b.id ?? Number.MAX_SAFE_INTEGER)
}

/** An `active` authorization that is no longer valid, marked `expired` (time) or `exhausted` (points). */
function retire(a: AuthorizationDraft, now: number): AuthorizationDraft {
  return { ...a, status: a.type === 'time' ? 'expired' : 'exhausted', updatedAt: now, changed: true }
}

/** A pending authorization made active now; a time one keeps its duration and starts now. */
function activate(a: AuthorizationDraft, now: number): AuthorizationDraft {
  if (a.type === 'time') {
    const duration = (a.endAt ?? a.startAt) - a.startAt
    return { ...a, status: 'active', startAt: now, endAt: now + duration, updatedAt: now, changed: true }
  }
  return { ...a, status: 'active', updatedAt: now, changed: true }
}

/** Activation step 2: every `active` authorization that is no longer valid, marked expired or exhausted. */
export function retireInvalid(list: readonly AuthorizationDraft[], now: number): AuthorizationDraft[] {
  return list.map((a) => (a.status === 'active' && !isValid(a, now) ? retire(a, now) : a))
}

/**
 * Revocation (our extension, docs/behaviour.md "Revocation"): a `pending` or `active` authorization
 * becomes `revoked` and is never active again. The caller runs the activation step afterwards, so
 * the next queued one can take its place.
 */
export function revoke(a: AuthorizationDraft, now: number): AuthorizationDraft {
  return { ...a, status: 'revoked', updatedAt: now, changed: true }
}

/** Whether an authorization can still be revoked: only `pending` and `active` ones can. */
export function isRevocable(a: Pick<AuthorizationRecord, 'status'>): boolean {
  return a.status === 'pending' || a.status === 'active'
}

/**
 * The activation step (docs/behaviour.md, B-act-2…4; B-act-1, serialization per user, is the commit's
 * version check): mark invalid `active` authorizations expired or exhausted; if no `active` one
 * remains, activate the oldest `pending` one (created_at, then id).
 */
export function runActivationStep(list: readonly AuthorizationDraft[], now: number): AuthorizationDraft[] {
  const checked = retireInvalid(list, now)
  if (checked.some((a) => a.status === 'active')) return checked
  const next = checked.filter((a) => a.status === 'pending').sort(fifoOrder)[0]
  if (next === undefined) return checked
  return checked.map((a) => (a === next ? activate(a, now) : a))
}

/**
 * The user's current authorization: the `active` one with the highest id. When it is not valid it
 * is marked expired or exhausted and treated as absent. Returns the (possibly updated) list as well.
 */
export function findCurrent(
  list: readonly AuthorizationDraft[],
  now: number,
): { list: AuthorizationDraft[]; current: AuthorizationDraft | null } {
  const active = latestActive(list)
  if (active === undefined) return { list: [...list], current: null }
  if (isValid(active, now)) return { list: [...list], current: active }
  return { list: list.map((a) => (a === active ? retire(a, now) : a)), current: null }
}

/** The `active` authorization with the highest id (B-current-1), valid or not; a new draft counts as newest. */
export function latestActive<A extends { status: string; id: number | null }>(list: readonly A[]): A | undefined {
  return list.filter((a) => a.status === 'active').sort((a, b) => (b.id ?? Number.MAX_SAFE_INTEGER) - (a.id ?? Number.MAX_SAFE_INTEGER))[0]
}

/**
 * The free authorization of a first scan: type `time`, source `free`, start now, end now plus the
 * free period, no points. It is `active` when the user has no `active` authorization, else `pending`.
 * The caller retires invalid active ones first ({@link retireInvalid}), so "active" here means one
 * that is still valid (docs/behaviour.md, B-free-3, D-free-stale).
 */
export function freeAuthorization(list: readonly AuthorizationDraft[], now: number, durationMs: number): AuthorizationDraft {
  const hasActive = list.some((a) => a.status === 'active')
  return {
    ...newTimeAuthorization({ now, durationMs, source: 'free' }),
    status: hasActive ? 'pending' : 'active',
  }
}

/** A new pending time authorization of the given duration (granted; activation decides when it starts). */
export function newTimeAuthorization(input: { now: number; durationMs: number; source: string }): AuthorizationDraft {
  return newDraft('time', input.now, input.source, { endAt: input.now + input.durationMs, points: 0 })
}

/** A new pending points authorization; points authorizations have no end time. */
export function newPointsAuthorization(input: { now: number; points: number; source: string }): AuthorizationDraft {
  return newDraft('points', input.now, input.source, { endAt: null, points: input.points })
}

function newDraft(
  type: AuthorizationType,
  now: number,
  source: string,
  shape: { endAt: number | null; points: number },
): AuthorizationDraft {
  return {
    id: null,
    type,
    status: 'pending',
    startAt: now,
    endAt: shape.endAt,
    remainingPoints: shape.points,
    totalPoints: shape.points,
    source,
    createdAt: now,
    updatedAt: now,
    changed: true,
  }
}

/** The outcome of spending points from the current authorization. */
export type SpendOutcome =
  | { status: 'ok'; list: AuthorizationDraft[]; used: AuthorizationDraft }
  | { status: 'need_purchase' | 'insufficient_points' }

/**
 * Uses the current authorization: a time one is used without change; a points one is decremented
 * by `points`, never below zero (fewer points left than asked: `insufficient_points`, nothing spent).
 * An authorization left at zero stays `active` until the next activation step exhausts it.
 */
export function spend(list: readonly AuthorizationDraft[], current: AuthorizationDraft | null, points: number, now: number): SpendOutcome {
  if (current === null) return { status: 'need_purchase' }
  if (current.type === 'time') return { status: 'ok', list: [...list], used: current }
  if (current.remainingPoints < points) return { status: 'insufficient_points' }
  const used: AuthorizationDraft = { ...current, remainingPoints: current.remainingPoints - points, updatedAt: now, changed: true }
  return { status: 'ok', list: list.map((a) => (a === current ? used : a)), used }
}
