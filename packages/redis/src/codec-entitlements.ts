/**
 * Ledger entries and idempotency records ⇄ Redis values (the other records are in `codec.ts`).
 * Both carry several free-text fields (a ledger entry its source, idempotency key and reason; an
 * idempotency record its fingerprint and the JSON result of a consumption), so they cannot end in a
 * single free-text field the way the other records do: their numbers are `|`-packed as usual and
 * their strings follow as one JSON array, trailing nulls left out (a consumption's entry ends in
 * `[]`). JSON keeps `null` apart from `""` and round-trips any string.
 *
 * | record      | value                                                                     |
 * |-------------|---------------------------------------------------------------------------|
 * | ledger      | `id\|authorizationId\|kind\|points\|remainingPoints\|at\|[source,idempotencyKey,reason]` |
 * | idempotency | `authorizationId\|createdAt\|[fingerprint,result]`                          |
 *
 * The commit script writes the ids (`id`, `authorizationId`) in front of the part built here (the
 * "tail"), once it has assigned them. A ledger entry is a member of its user's ledger zset, so its
 * id comes first and keeps every member unique; the user id is in the key name. Kinds are one
 * letter: `g` grant, `a` activate, `c` consume, `e` expire, `x` exhaust, `r` revoke.
 *
 * @module
 */
import type { IdempotencyRecord, LedgerEntryRecord, LedgerKind } from '@scanauth/core'
import type { NewIdempotencyRecord, NewLedgerEntry } from '@scanauth/core/store'
import { fields, malformed, num, readNum, SEP } from './codec'

const KIND = { grant: 'g', activate: 'a', consume: 'c', expire: 'e', exhaust: 'x', revoke: 'r' } as const satisfies Record<LedgerKind, string>
const KIND_OF = new Map<string, LedgerKind>(Object.entries(KIND).map(([k, v]) => [v, k as LedgerKind]))

/** The ledger fields after `id|authorizationId|` (the commit script writes those two). */
export function ledgerTail(entry: NewLedgerEntry): string {
  return [KIND[entry.kind], num(entry.points), num(entry.remainingPoints), num(entry.at), strings([entry.source, entry.idempotencyKey, entry.reason])].join(SEP)
}

/** A ledger entry of user `userId` from its member in the user's ledger zset. */
export function decodeLedgerEntry(userId: number, value: string): LedgerEntryRecord {
  const f = fields(value, 7, 'ledger entry')
  const kind = KIND_OF.get(f[2] as string)
  if (kind === undefined) throw malformed('ledger entry', value)
  const [source, idempotencyKey, reason] = readStrings(f[6], 3, 'ledger entry', value)
  return {
    id: readNum(f[0], 'ledger entry', value),
    userId,
    authorizationId: readNum(f[1], 'ledger entry', value),
    kind,
    points: readNum(f[3], 'ledger entry', value),
    remainingPoints: readNum(f[4], 'ledger entry', value),
    at: readNum(f[5], 'ledger entry', value),
    source: source as string | null,
    idempotencyKey: idempotencyKey as string | null,
    reason: reason as string | null,
  }
}

/** The idempotency fields after `authorizationId|` (the commit script writes the id it resolved). */
export function idempotencyTail(record: NewIdempotencyRecord): string {
  return [num(record.createdAt), strings([record.fingerprint, record.result])].join(SEP)
}

/** The idempotency record of `key` from its stored value. */
export function decodeIdempotency(key: string, value: string): IdempotencyRecord {
  const f = fields(value, 3, 'idempotency record')
  const [fingerprint, result] = readStrings(f[2], 2, 'idempotency record', value)
  if (typeof fingerprint !== 'string') throw malformed('idempotency record', value)
  return {
    key,
    fingerprint,
    authorizationId: f[0] === '' ? null : readNum(f[0], 'idempotency record', value),
    result: result as string | null,
    createdAt: readNum(f[1], 'idempotency record', value),
  }
}

/** Nullable strings as a JSON array, trailing nulls left out. */
function strings(values: ReadonlyArray<string | null>): string {
  let end = values.length
  while (end > 0 && values[end - 1] === null) end--
  return JSON.stringify(values.slice(0, end))
}

/** `count` nullable strings from a JSON array written by {@link strings}. */
function readStrings(field: string | undefined, count: number, kind: string, value: string): Array<string | null> {
  let parsed: unknown
  try {
    parsed = JSON.parse(field ?? '')
  } catch {
    throw malformed(kind, value)
  }
  if (!Array.isArray(parsed) || parsed.length > count) throw malformed(kind, value)
  const out: Array<string | null> = []
  for (let i = 0; i < count; i++) {
    const item: unknown = parsed[i] ?? null
    if (item !== null && typeof item !== 'string') throw malformed(kind, value)
    out.push(item)
  }
  return out
}
