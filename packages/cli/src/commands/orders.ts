/**
 * `scanauth orders <openid>`: the user's orders, found two ways.
 *
 * The open ones come from `store.listOpenOrders({ userId })`. A paid order is found through the
 * ledger instead, so that the orders the user's grants were paid by are listed whoever placed them
 * (`store.listOrders({ userId })` would list the orders the user placed, closed ones too): the grant
 * a payment makes carries the idempotency key `order:<out_trade_no>` (docs/behaviour.md, B-order-6),
 * so every `grant` entry of the user's ledger with such a key names one, which `store.loadOrder`
 * reads. A refunded order is found the same way (its grant stays in the ledger). A closed order that
 * was never paid has no grant and is no longer open: it is not listed.
 *
 * @module
 */
import { grantKeyOf, type OrderRecord } from '@scanauth/core'
import { expectPositionals, identifierArg } from '../args'
import type { Command } from '../command'
import { count, iso, table, time, yuan } from '../format'
import { storeMethod, type OpenedStore } from '../opened-store'
import { eachLedgerEntry, requireUser } from './users'

/** The prefix of the idempotency key of an order's grant (`grantKeyOf`). */
const ORDER_KEY_PREFIX = grantKeyOf('')

/** The largest page `listOpenOrders` answers. */
const OPEN_ORDERS_PAGE = 1000

/** An order as `orders` shows it (times in ISO 8601). */
export interface OrderOutput {
  /** The order id, sent to WeChat Pay as `out_trade_no`. */
  orderId: string
  /** The plan bought. */
  planId: string
  /** The plan's description when the order was opened. */
  description: string
  /** The price, in fen. */
  amountFen: number
  /** What the plan grants. */
  grant: OrderRecord['grant']
  /** `open`, `paid`, `closed` or `refunded`. */
  status: OrderRecord['status']
  /** The scene whose device waited for it, or null. */
  sceneStr: string | null
  /** How it was paid: `native` (a code the device showed) or `jsapi` (WeChat's cashier on the phone). */
  channel: OrderRecord['channel']
  /** ISO 8601. */
  createdAt: string
  /** The payment deadline, ISO 8601. */
  expiresAt: string
  /** ISO 8601, once paid. */
  paidAt: string | null
  /** WeChat Pay's transaction id, once paid. */
  transactionId: string | null
  /** The authorization the payment granted, once paid. */
  authorizationId: number | null
  /** Refunded so far, in fen. */
  refundedFen: number
  /** How it was found: among the open orders, through a grant of the ledger, or both. */
  foundBy: Array<'open' | 'ledger'>
}

/** A grant of the ledger keyed like an order's whose order the store does not have (a payment taken outside scanauth's orders). */
export interface UnmatchedGrant {
  /** The key, `order:<id>`. */
  idempotencyKey: string
  /** The authorization granted. */
  authorizationId: number
  /** ISO 8601. */
  at: string
}

/** The JSON of `orders`. */
export interface OrdersOutput {
  /** The user. */
  user: {
    /** Its id. */
    id: number
    /** Its openid. */
    openid: string
  }
  /** Its orders, oldest first. */
  orders: OrderOutput[]
  /** Grants keyed `order:<id>` with no such order in the store. */
  unmatchedGrants: UnmatchedGrant[]
}

export const ordersCommand: Command<{ openid: string }> = {
  name: 'orders',
  usage: 'orders <openid>',
  summary: "the user's orders: open ones, and those its ledger's grants were paid by",
  help: [
    "Lists the orders of the user with this openid, oldest first. The open ones come from the store's",
    'listOpenOrders; the others are found through the ledger: the grant a payment makes',
    'carries the idempotency key order:<out_trade_no>, so each grant entry with such a key names an order,',
    'which store.loadOrder reads (paid and refunded orders). A closed order that was never paid is not',
    'listed. A grant keyed order:<id> with no such order (a payment granted by your own code) is listed',
    'apart. Reads only; an unknown openid is an error (exit 1).',
  ],
  options: {},
  examples: ['scanauth orders o6_bmjrPTlm6_2sgVt7hMZOPfL2M'],
  parse(line) {
    const [openid] = expectPositionals('orders', line.positionals, ['openid'])
    return { openid: identifierArg('orders', 'openid', openid as string) }
  },
  async run({ openid }, context) {
    const output = await context.withAuth(async (auth, opened): Promise<OrdersOutput> => {
      const user = await requireUser(auth, openid)
      const loadOrder = storeMethod(opened.store, 'loadOrder', opened.label, 'read orders')
      const found = new Map<string, { order: OrderRecord; by: Set<'open' | 'ledger'> }>()
      for (const order of await openOrdersOf(opened, user.id)) found.set(order.outTradeNo, { order, by: new Set(['open']) })
      const keyed: UnmatchedGrant[] = []
      await eachLedgerEntry(auth, user.id, (entry) => {
        if (entry.kind === 'grant' && entry.idempotencyKey?.startsWith(ORDER_KEY_PREFIX)) {
          keyed.push({ idempotencyKey: entry.idempotencyKey, authorizationId: entry.authorizationId, at: entry.at })
        }
      })
      const unmatchedGrants: UnmatchedGrant[] = []
      for (const grant of keyed) {
        const orderId = grant.idempotencyKey.slice(ORDER_KEY_PREFIX.length)
        const known = found.get(orderId)
        if (known !== undefined) {
          known.by.add('ledger')
          continue
        }
        const order = await loadOrder(orderId)
        if (order === null) unmatchedGrants.push(grant)
        else found.set(orderId, { order, by: new Set(['ledger']) })
      }
      const orders = [...found.values()]
        .sort((a, b) => a.order.createdAt - b.order.createdAt || (a.order.outTradeNo < b.order.outTradeNo ? -1 : 1))
        .map(({ order, by }) => orderOutput(order, [...by]))
      return { user: { id: user.id, openid }, orders, unmatchedGrants }
    })
    return { json: output, text: ordersText(output) }
  },
}

/** Every open order of the user, page by page. */
async function openOrdersOf(opened: OpenedStore, userId: number): Promise<OrderRecord[]> {
  const listOpenOrders = storeMethod(opened.store, 'listOpenOrders', opened.label, 'list open orders')
  const all: OrderRecord[] = []
  let after: { createdAt: number; outTradeNo: string } | undefined
  for (;;) {
    const page = await listOpenOrders(after === undefined ? { userId, limit: OPEN_ORDERS_PAGE } : { userId, after, limit: OPEN_ORDERS_PAGE })
    all.push(...page)
    const last = page[page.length - 1]
    if (page.length < OPEN_ORDERS_PAGE || last === undefined) return all
    after = { createdAt: last.createdAt, outTradeNo: last.outTradeNo }
  }
}

function orderOutput(o: OrderRecord, foundBy: Array<'open' | 'ledger'>): OrderOutput {
  return {
    orderId: o.outTradeNo,
    planId: o.planId,
    description: o.description,
    amountFen: o.amountFen,
    grant: o.grant,
    status: o.status,
    sceneStr: o.sceneStr,
    channel: o.channel,
    createdAt: iso(o.createdAt),
    expiresAt: iso(o.expiresAt),
    paidAt: o.paidAt === null ? null : iso(o.paidAt),
    transactionId: o.transactionId,
    authorizationId: o.authorizationId,
    refundedFen: o.refundedFen,
    foundBy: foundBy.sort(),
  }
}

function ordersText(output: OrdersOutput): string[] {
  const rows = output.orders.map((o) => [
    o.orderId,
    o.status,
    o.planId,
    yuan(o.amountFen),
    o.channel === 'jsapi' ? 'on the phone' : 'device code',
    `created ${time(o.createdAt)}`,
    o.status === 'open' ? `pay by ${time(o.expiresAt)}` : o.paidAt === null ? '' : `paid ${time(o.paidAt)}`,
    o.authorizationId === null ? '' : `auth #${o.authorizationId}`,
    o.refundedFen > 0 ? `refunded ${yuan(o.refundedFen)}` : '',
  ])
  const lines = [`user #${output.user.id} (${output.user.openid}): ${count(output.orders.length, 'order')}`, ...table(rows, '  ')]
  if (output.unmatchedGrants.length > 0) {
    lines.push(`${count(output.unmatchedGrants.length, 'grant')} keyed order:<id> without such an order in the store`)
    lines.push(...table(output.unmatchedGrants.map((g) => [g.idempotencyKey, `auth #${g.authorizationId}`, time(g.at)]), '  '))
  }
  return lines
}
