/**
 * Orders ⇄ Redis hashes. An order is one hash, `<p>od:<outTradeNo>`, with one field per record
 * field, named as in the record; the outTradeNo is the key's name and not repeated. Numbers are
 * written with `String(n)` and read with `Number(s)` (exact for every finite double), `null` is a
 * field left out, `grant` and `refunds` are JSON.
 *
 * Why a hash and not one packed string like the other records: the save-order script must read the
 * stored version, and the stored status, userId, sceneStr and createdAt to take the order out of
 * the indexes it is in, and `HMGET` hands it exactly those fields without parsing anything in Lua
 * (no second copy of the codec there, no JSON numbers through cjson, which prints 14 digits). An
 * order also carries several free-text fields (planId, description, sceneStr, transactionId, the
 * refunds' ids), which a `|`-packed value could hold only at its end. And an order is read by
 * hand when a payment goes wrong: `HGETALL` shows it field by field. Orders are few next to scenes,
 * so the field names a hash repeats per order cost little (`docs/redis.md`, "Memory").
 *
 * | field             | value                                                         |
 * |-------------------|---------------------------------------------------------------|
 * | `version`         | decimal; the save-order script compares it as a string        |
 * | `status`          | `open`, `paid`, `closed` or `refunded`                        |
 * | `channel`         | `native` or `jsapi`; a hash without it is `native`            |
 * | `userId`, `amountFen`, `createdAt`, `expiresAt`, `updatedAt`, `refundedFen` | decimal |
 * | `paidAt`, `authorizationId` | decimal; left out when null                         |
 * | `planId`, `description` | the string                                              |
 * | `sceneStr`, `transactionId` | the string; left out when null                      |
 * | `grant`           | JSON: `{"type":"time","days":n}` or `{"type":"points","points":n}` |
 * | `refunds`         | JSON array of `{"outRefundNo","refundId","amountFen","at"}`, oldest first |
 *
 * `channel` was added with payment on the phone (docs/behaviour.md B-phone-1): the orders stored
 * before it were all Native ones, so a hash without it reads as `native`. It is always written,
 * `native` included, so that `HGETALL` shows how every order written since is paid.
 *
 * @module
 */
import type { OrderChannel, OrderGrant, OrderRecord, OrderRefundRecord, OrderStatus } from '@scanauth/core'
import { malformed, num } from './codec'
import { RedisStoreError } from './errors'

const STATUSES: ReadonlySet<string> = new Set<OrderStatus>(['open', 'paid', 'closed', 'refunded'])
const CHANNELS: ReadonlySet<string> = new Set<OrderChannel>(['native', 'jsapi'])

/** The error for an order `saveOrder` cannot store faithfully; nothing is sent. */
function invalid(outTradeNo: unknown, what: string): RedisStoreError {
  return new RedisStoreError('invalid_order', `saveOrder: order ${JSON.stringify(outTradeNo)}: ${what}`)
}

/**
 * The hash of an order as `HSET` field/value pairs, nulls left out. Checks what the encoding needs
 * (types, finite numbers, a `createdAt` the indexes can sort) and nothing of the rules: the store
 * stores any order core hands it.
 *
 * @throws {@link RedisStoreError} `invalid_order` naming the field.
 */
export function encodeOrder(order: OrderRecord): string[] {
  const no = order.outTradeNo
  const number = (name: string, value: unknown): string => {
    if (typeof value !== 'number' || !Number.isFinite(value)) throw invalid(no, `${name} must be a finite number`)
    return num(value)
  }
  const text = (name: string, value: unknown): string => {
    if (typeof value !== 'string') throw invalid(no, `${name} must be a string`)
    return value
  }
  if (typeof no !== 'string') throw invalid(no, 'outTradeNo must be a string')
  // The indexes sort members as 16 fixed-width digits (keys.ts, orderMember): exact for every safe
  // integer ≥ 0, i.e. every millisecond time up to the year 287396.
  if (!Number.isSafeInteger(order.createdAt) || order.createdAt < 0) throw invalid(no, 'createdAt must be a safe integer ≥ 0')
  if (!STATUSES.has(order.status)) throw invalid(no, `unknown status ${JSON.stringify(order.status)}`)
  if (!CHANNELS.has(order.channel)) throw invalid(no, `unknown channel ${JSON.stringify(order.channel)}`)
  const pairs = [
    'version', number('version', order.version),
    'status', order.status,
    'channel', order.channel,
    'userId', number('userId', order.userId),
    'planId', text('planId', order.planId),
    'description', text('description', order.description),
    'amountFen', number('amountFen', order.amountFen),
    'grant', encodeGrant(no, order.grant, number),
    'createdAt', num(order.createdAt),
    'expiresAt', number('expiresAt', order.expiresAt),
    'updatedAt', number('updatedAt', order.updatedAt),
    'refundedFen', number('refundedFen', order.refundedFen),
    'refunds', encodeRefunds(no, order.refunds, number, text),
  ]
  if (order.sceneStr !== null) pairs.push('sceneStr', text('sceneStr', order.sceneStr))
  if (order.paidAt !== null) pairs.push('paidAt', number('paidAt', order.paidAt))
  if (order.transactionId !== null) pairs.push('transactionId', text('transactionId', order.transactionId))
  if (order.authorizationId !== null) pairs.push('authorizationId', number('authorizationId', order.authorizationId))
  return pairs
}

/** The grant as JSON, rebuilt field by field so that nothing but the record's fields is stored. */
function encodeGrant(no: string, grant: OrderGrant, number: (name: string, value: unknown) => string): string {
  if (grant?.type === 'time') return JSON.stringify({ type: 'time', days: Number(number('grant.days', grant.days)) })
  if (grant?.type === 'points') return JSON.stringify({ type: 'points', points: Number(number('grant.points', grant.points)) })
  throw invalid(no, 'grant must be { type: "time", days } or { type: "points", points }')
}

/** The refunds as a JSON array, oldest first as given, each rebuilt field by field. */
function encodeRefunds(
  no: string,
  refunds: readonly OrderRefundRecord[],
  number: (name: string, value: unknown) => string,
  text: (name: string, value: unknown) => string,
): string {
  if (!Array.isArray(refunds)) throw invalid(no, 'refunds must be an array')
  return JSON.stringify(
    refunds.map((r, i) => ({
      outRefundNo: text(`refunds[${i}].outRefundNo`, r?.outRefundNo),
      refundId: text(`refunds[${i}].refundId`, r?.refundId),
      amountFen: Number(number(`refunds[${i}].amountFen`, r?.amountFen)),
      at: Number(number(`refunds[${i}].at`, r?.at)),
    })),
  )
}

/** A flat `[field, value, field, value, ...]` reply (HGETALL inside a script) as an object. */
export function hashFromFlat(flat: readonly unknown[]): Record<string, string> {
  const hash: Record<string, string> = {}
  for (let i = 0; i + 1 < flat.length; i += 2) hash[String(flat[i])] = String(flat[i + 1])
  return hash
}

/**
 * The order `outTradeNo` from its stored hash (as `HGETALL` answers it), or null for an empty one
 * (no such key).
 *
 * @throws {@link RedisStoreError} `malformed_record` when the hash is not an order this store wrote.
 */
export function decodeOrder(outTradeNo: string, hash: Readonly<Record<string, string>>): OrderRecord | null {
  const names = Object.keys(hash)
  if (names.length === 0) return null
  const fail = () => malformed('order', `${outTradeNo} ${JSON.stringify(hash)}`)
  const number = (name: string): number => {
    const field = hash[name]
    const n = field === undefined || field === '' ? Number.NaN : Number(field)
    if (!Number.isFinite(n)) throw fail()
    return n
  }
  const optNumber = (name: string): number | null => (hash[name] === undefined ? null : number(name))
  const text = (name: string): string => {
    const field = hash[name]
    if (field === undefined) throw fail()
    return field
  }
  const status = hash.status
  if (status === undefined || !STATUSES.has(status)) throw fail()
  // Absent on an order stored before channels were recorded: those were all Native (see above).
  const channel = hash.channel ?? 'native'
  if (!CHANNELS.has(channel)) throw fail()
  return {
    outTradeNo,
    userId: number('userId'),
    planId: text('planId'),
    description: text('description'),
    amountFen: number('amountFen'),
    grant: decodeGrant(text('grant'), fail),
    sceneStr: hash.sceneStr ?? null,
    channel: channel as OrderChannel,
    status: status as OrderStatus,
    createdAt: number('createdAt'),
    expiresAt: number('expiresAt'),
    updatedAt: number('updatedAt'),
    paidAt: optNumber('paidAt'),
    transactionId: hash.transactionId ?? null,
    authorizationId: optNumber('authorizationId'),
    refundedFen: number('refundedFen'),
    refunds: decodeRefunds(text('refunds'), fail),
    version: number('version'),
  }
}

/** JSON that does not parse counts as a malformed record, like any other unreadable field. */
function parse(json: string, fail: () => RedisStoreError): unknown {
  try {
    return JSON.parse(json)
  } catch {
    throw fail()
  }
}

const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value)

function decodeGrant(json: string, fail: () => RedisStoreError): OrderGrant {
  const grant = parse(json, fail) as { type?: unknown; days?: unknown; points?: unknown } | null
  if (grant?.type === 'time' && isNumber(grant.days)) return { type: 'time', days: grant.days }
  if (grant?.type === 'points' && isNumber(grant.points)) return { type: 'points', points: grant.points }
  throw fail()
}

function decodeRefunds(json: string, fail: () => RedisStoreError): OrderRefundRecord[] {
  const refunds = parse(json, fail)
  if (!Array.isArray(refunds)) throw fail()
  return refunds.map((item: unknown) => {
    const r = item as Partial<Record<keyof OrderRefundRecord, unknown>> | null
    if (typeof r?.outRefundNo !== 'string' || typeof r.refundId !== 'string' || !isNumber(r.amountFen) || !isNumber(r.at)) throw fail()
    return { outRefundNo: r.outRefundNo, refundId: r.refundId, amountFen: r.amountFen, at: r.at }
  })
}
