/**
 * One user and its live authorizations, being planned: the unit of serialization. Pure functions
 * that change a user draft, and the conversion of a draft into the user part of a change set.
 */
import type { UserAggregate, UserRecord } from '../store/records'
import type { NewAuthorization, UserWrite } from '../store/contract'
import { draftOf, freeAuthorization, retireInvalid, type AuthorizationDraft } from './authorizations'

/** A user being planned. `id` and `loadedVersion` are null for a user this operation creates. */
export interface UserDraft {
  user: Omit<UserRecord, 'id'> & { id: number | null }
  loadedVersion: number | null
  /** True when the user record itself changed (last_seen_at, has_claimed_free). */
  changed: boolean
  authorizations: AuthorizationDraft[]
  /** The authorizations as they were loaded, by id: what the ledger compares against. */
  loaded: ReadonlyMap<number, AuthorizationDraft>
}

/** A loaded user as an unchanged draft. */
export function draftUser(aggregate: UserAggregate): UserDraft {
  const authorizations = aggregate.authorizations.map(draftOf)
  return {
    user: aggregate.user,
    loadedVersion: aggregate.user.version,
    changed: false,
    authorizations,
    loaded: new Map(authorizations.map((a) => [a.id as number, a])),
  }
}

/** A user seen for the first time (scan step 4, or a grant by openid): no free trial claimed. */
export function newUser(openid: string, now: number): UserDraft {
  return {
    user: { id: null, openid, createdAt: now, lastSeenAt: now, hasClaimedFree: false, version: 1 },
    loadedVersion: null,
    changed: true,
    authorizations: [],
    loaded: new Map(),
  }
}

/** Scan step 4: the user was seen now. */
export function touch(draft: UserDraft, now: number): UserDraft {
  return { ...draft, user: { ...draft.user, lastSeenAt: now }, changed: true }
}

/**
 * Scan step 5: grant the free authorization only if this moves has_claimed_free from false to
 * true. A user who already claimed it is returned unchanged. An active authorization that is no
 * longer valid counts as absent: it is retired in the same change, and the trial starts active
 * (docs/behaviour.md, B-free-3, D-free-stale).
 */
export function claimFreeTrial(draft: UserDraft, now: number, durationMs: number): UserDraft {
  if (draft.user.hasClaimedFree) return draft
  const checked = retireInvalid(draft.authorizations, now)
  return {
    ...draft,
    user: { ...draft.user, hasClaimedFree: true },
    changed: true,
    authorizations: [...checked, freeAuthorization(checked, now, durationMs)],
  }
}

/** Replaces the draft's authorizations (after a rule ran on them). */
export function withAuthorizations(draft: UserDraft, authorizations: AuthorizationDraft[]): UserDraft {
  return { ...draft, authorizations }
}

/** Adds a new authorization at the end (a grant). */
export function addAuthorization(draft: UserDraft, authorization: AuthorizationDraft): UserDraft {
  return { ...draft, authorizations: [...draft.authorizations, authorization] }
}

/**
 * The user part of a change set, or null when nothing changed. Any change to the user or to one of
 * its authorizations writes the user with its version bumped: that is what serializes per user.
 */
export function toUserWrite(draft: UserDraft): UserWrite | null {
  const inserts: NewAuthorization[] = draft.authorizations.filter((a) => a.id === null).map(toNewAuthorization)
  const updates = draft.authorizations.filter((a) => a.id !== null && a.changed)
  if (!draft.changed && inserts.length === 0 && updates.length === 0) return null
  if (draft.user.id === null || draft.loadedVersion === null) {
    const { id: _none, ...user } = draft.user
    return { op: 'insert', user: { ...user, version: 1 }, insertAuthorizations: inserts }
  }
  const userId = draft.user.id
  return {
    op: 'update',
    user: { ...draft.user, id: userId, version: draft.loadedVersion + 1 },
    expectedVersion: draft.loadedVersion,
    insertAuthorizations: inserts,
    updateAuthorizations: updates.map(({ changed: _c, ...a }) => ({ ...a, id: a.id as number, userId })),
  }
}

function toNewAuthorization(a: AuthorizationDraft): NewAuthorization {
  const { id: _id, changed: _changed, ...rest } = a
  return rest
}
