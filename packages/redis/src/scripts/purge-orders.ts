/**
 * The purge-orders script (one batch of `RedisStore.purgeExpired`): deletes up to a batch of
 * closed orders whose payment deadline is at or before the purge's cutoff, oldest deadline first,
 * in one atomic step of the server (docs/behaviour.md, B-order-purge).
 *
 * ```
 * KEYS[1]  <prefix>seq, to check the layout (like every script) and route the call to the
 *          prefix's slot on a Cluster.
 * KEYS[2]  <prefix>oc, the closed orders (score expiresAt, member outTradeNo). The order keys are
 *          built from ARGV[1]; they share the slot of both declared keys because the prefix
 *          carries the hash tag.
 * ARGV     prefix, cutoff (core's `purgeCutoff`: now − retentionMs), limit
 * ```
 *
 * Reply: `{ deleted, done }`: how many orders it deleted, and 1 when it reached the end of the
 * range (fewer than `limit` were due), 0 when it stopped at `limit`.
 *
 * Which orders go is core's `orderNeededUntil` (`rules/retention.ts`), written here as the SQL
 * stores write it in their WHERE: a closed order with no `paidAt` and a `refundedFen` of 0 is
 * needed until its `expiresAt` (the index's score, compared by ZRANGE BYSCORE's inclusive bound:
 * `expiresAt <= cutoff`, the expiry boundary of B-expiry-1); any other order is kept for good. The
 * stored hash decides, never the index alone: a closed order that records money (the payment
 * service contradicting itself) stays, and so stays in the index, where the script passes over it
 * (an offset, so the read goes on behind it); a member whose order is no longer closed (none is
 * ever left so by the save-order script) is taken out of the index and nothing else is touched.
 *
 * A deleted order leaves the indexes of every order (`<p>oa`, `<p>oas:closed`, `<p>oau:<userId>`)
 * with its hash, so `listOrders` never names a purged order.
 *
 * Deleting frees memory, but the `#!lua` line keeps the rule of every script here: under the
 * memory limit the server refuses the whole script up front.
 *
 * @module
 */
import { LAYOUT_GUARD } from './layout-guard'

/** The purge-orders script's source. */
export const PURGE_ORDERS_SCRIPT = `#!lua
${LAYOUT_GUARD}
local prefix, cutoff, limit = ARGV[1], ARGV[2], tonumber(ARGV[3])
local deleted, passed = 0, 0
while deleted < limit do
  local want = limit - deleted
  -- The orders kept for good sort before the ones still to read: skip them.
  local members = redis.call('ZRANGE', KEYS[2], '-inf', cutoff, 'BYSCORE', 'LIMIT', passed, want)
  for _, outTradeNo in ipairs(members) do
    local key = prefix .. 'od:' .. outTradeNo
    local order = redis.call('HMGET', key, 'status', 'paidAt', 'refundedFen', 'userId', 'createdAt')
    if order[1] ~= 'closed' then
      redis.call('ZREM', KEYS[2], outTradeNo)
    elseif order[2] or order[3] ~= '0' then
      passed = passed + 1
    else
      redis.call('DEL', key)
      redis.call('ZREM', KEYS[2], outTradeNo)
      -- Out of the indexes of every order too (keys.ts: the same member as save-order.ts files).
      local created = order[5] or ''
      local filed = string.rep('0', 16 - #created) .. created .. ':' .. outTradeNo
      redis.call('ZREM', prefix .. 'oa', filed)
      redis.call('ZREM', prefix .. 'oas:closed', filed)
      redis.call('ZREM', prefix .. 'oau:' .. (order[4] or ''), filed)
      deleted = deleted + 1
    end
  end
  if #members < want then return { deleted, 1 } end
end
return { deleted, 0 }
`
