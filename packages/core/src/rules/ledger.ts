/**
 * The ledger (docs/behaviour.md, B-ledger-1…5): what one operation did to a user's entitlements, read
 * off the difference between the authorizations as loaded and as planned. Deriving the entries
 * from that difference, rather than having each operation write its own, means no rule can change
 * an authorization without the ledger saying so.
 */
import type { LedgerKind } from '../store/records'
import { NEW_USER, type AuthorizationRef, type NewLedgerEntry } from '../store/contract'
import type { AuthorizationDraft } from './authorizations'
import type { UserDraft } from './user'

/** What the entries of one operation share besides the changes themselves. */
export interface LedgerContext {
  /** The operation's clock reading. */
  now: number
  /** The idempotency key of the call, recorded on its `grant` and `consume` entries. */
  idempotencyKey?: string | null
  /** The reason given for a revocation, recorded on `revoke` entries. */
  reason?: string | null
}

/**
 * The order entries of one commit are written in: what ended before what began, and a
 * consumption last (it uses the authorization the activation step left current).
 */
const KIND_ORDER: readonly LedgerKind[] = ['revoke', 'expire', 'exhaust', 'grant', 'activate', 'consume']

/** The status change that each kind records, for a loaded authorization. */
const TRANSITIONS: Readonly<Record<string, LedgerKind>> = {
  'pending>active': 'activate',
  'active>expired': 'expire',
  'active>exhausted': 'exhaust',
  'pending>revoked': 'revoke',
  'active>revoked': 'revoke',
}

/** The ledger entries for everything `draft` changed since it was loaded, in {@link KIND_ORDER}. */
export function ledgerEntries(draft: UserDraft, context: LedgerContext): NewLedgerEntry[] {
  const userId = draft.user.id ?? NEW_USER
  const found: Array<{ kind: LedgerKind; entry: NewLedgerEntry }> = []
  const add = (kind: LedgerKind, a: AuthorizationDraft, ref: AuthorizationRef, points: number, remaining = a.remainingPoints) =>
    found.push({ kind, entry: entryOf(kind, a, ref, { points, remaining }, userId, context) })

  let inserted = 0
  for (const a of draft.authorizations) {
    if (a.id === null) {
      const ref = { inserted: inserted++ }
      add('grant', a, ref, a.type === 'points' ? a.totalPoints : 0)
      if (a.status === 'active') add('activate', a, ref, 0)
      continue
    }
    const before = draft.loaded.get(a.id)
    if (before === undefined || !a.changed) continue
    const transition = TRANSITIONS[`${before.status}>${a.status}`]
    // A status change comes before any consumption in the same operation (the activation step
    // runs first), so it leaves the points as they were loaded.
    if (transition !== undefined) add(transition, a, a.id, 0, before.remainingPoints)
    if (a.remainingPoints < before.remainingPoints) add('consume', a, a.id, a.remainingPoints - before.remainingPoints)
  }
  return found.sort((x, y) => KIND_ORDER.indexOf(x.kind) - KIND_ORDER.indexOf(y.kind)).map((f) => f.entry)
}

function entryOf(
  kind: LedgerKind,
  a: AuthorizationDraft,
  authorizationId: AuthorizationRef,
  change: { points: number; remaining: number },
  userId: NewLedgerEntry['userId'],
  context: LedgerContext,
): NewLedgerEntry {
  const keyed = kind === 'grant' || kind === 'consume'
  return {
    userId,
    authorizationId,
    kind,
    points: change.points,
    remainingPoints: change.remaining,
    at: context.now,
    source: kind === 'grant' ? a.source : null,
    idempotencyKey: keyed ? (context.idempotencyKey ?? null) : null,
    reason: kind === 'revoke' ? (context.reason ?? null) : null,
  }
}
