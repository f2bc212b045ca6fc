/**
 * The save-order script (`Store.saveOrder`): checks an order write's expectation and, when it
 * holds, replaces the order's hash and keeps the three open-order indexes and the closed-order
 * index in step, in one atomic step of the server. It knows the key layout (`keys.ts`) and which
 * fields the indexes are built from; it knows nothing of what an order's statuses mean beyond
 * "`open` is listed" and "`closed` is what a purge looks at".
 *
 * ```
 * KEYS[1]  <prefix>seq, to check the layout (like every script) and route the call to the
 *          prefix's slot on a Cluster.
 * KEYS[2]  <prefix>od:<outTradeNo>, the order. The index keys are built from ARGV[1]; they share
 *          the slot of both declared keys because the prefix carries the hash tag.
 * ARGV     prefix, receiptId ('' = no receipt), receiptTtlMs, op ('i' insert | 'u' update),
 *          expectedVersion ('' for an insert), outTradeNo, then the order's field/value pairs
 *          (`codec-orders.ts`, nulls left out)
 * ```
 *
 * Reply: 1 when written, 0 when the expectation failed (an insert whose order exists, an update
 * whose stored version is another or whose order does not exist); nothing is written then.
 *
 * A write that succeeded leaves a receipt, `<p>r:<receiptId>`, for `commitReceiptSeconds`, as a
 * commit does: when ioredis re-sends a write whose reply was lost with the connection, the copy
 * finds the receipt and answers 1 again, where it would otherwise fail its own expectation and
 * answer 0 for a write that was applied (and the caller would take a write it won for one it lost).
 *
 * The indexes (`<p>oo`, `<p>ou:<userId>`, `<p>os:<sceneStr>`) hold the member `<createdAt
 * zero-padded to 16 digits>:<outTradeNo>` of every `open` order. The order's stored status,
 * userId, sceneStr and createdAt say where it is now: it is taken out of those indexes, then the
 * new order is filed by its own fields. So the indexes follow any update, even one that moved an
 * open order to another user or time, and an order that leaves `open` leaves them.
 *
 * The indexes of every order (`<p>oa`, `<p>oas:<status>`, `<p>oau:<userId>`, members as above) hold
 * each order whatever its status, for the operator's `listOrders`: the stored order is taken out of
 * those its stored status, userId and createdAt name, and the new order filed by its own.
 *
 * The closed-order index (`<p>oc`) holds every `closed` order, score its `expiresAt` (the decimal
 * string the client wrote, which Redis reads as the same double), member its outTradeNo: the
 * purge script (`purge-orders.ts`) reads it up to the purge's cutoff. An order leaves it when it
 * leaves `closed`. Nothing here sets a TTL: only a purge deletes an order.
 *
 * The `#!lua` line (Redis 7+) makes the server refuse the whole script up front when it is out of
 * memory rather than fail half-way; the checks come before the first write for the same reason.
 *
 * @module
 */
import { LAYOUT_GUARD } from './layout-guard'

/** The save-order script's source. */
export const SAVE_ORDER_SCRIPT = `#!lua
${LAYOUT_GUARD}
local prefix, receiptId, receiptTtl = ARGV[1], ARGV[2], ARGV[3]
local op, expected, outTradeNo = ARGV[4], ARGV[5], ARGV[6]
local key = KEYS[2]
local FIELDS = 7 -- where the field/value pairs start

-- A re-sent write (its first reply was lost) answers what the first run answered.
local receiptKey = prefix .. 'r:' .. receiptId
if receiptId ~= '' and redis.call('EXISTS', receiptKey) == 1 then return 1 end

-- 1. The expectation, before any write. An absent field is false in Lua, so an update of an
--    order that does not exist fails the comparison too.
local stored = redis.call('HMGET', key, 'version', 'status', 'userId', 'sceneStr', 'createdAt')
local closedIndex = prefix .. 'oc'
if op == 'i' then
  if redis.call('EXISTS', key) == 1 then return 0 end
elseif op ~= 'u' then
  return redis.error_reply('scanauth save-order: unknown op ' .. tostring(op))
elseif stored[1] ~= expected then
  return 0
end

-- The indexes an order with these fields is in while open, and its member there (keys.ts,
-- orderMember: the same padding, from the same decimal string the client wrote).
local function indexes(userId, sceneStr)
  local list = { prefix .. 'oo', prefix .. 'ou:' .. userId }
  if sceneStr then list[3] = prefix .. 'os:' .. sceneStr end
  return list
end
local function member(createdAt)
  return string.rep('0', 16 - #createdAt) .. createdAt .. ':' .. outTradeNo
end

-- 2. Out of the indexes the stored order is in (ZREM of a missing member changes nothing).
if stored[2] then
  local old = member(stored[5])
  redis.call('ZREM', prefix .. 'oa', old)
  redis.call('ZREM', prefix .. 'oas:' .. stored[2], old)
  redis.call('ZREM', prefix .. 'oau:' .. stored[3], old)
end
if stored[2] == 'open' then
  local old = member(stored[5])
  for _, index in ipairs(indexes(stored[3], stored[4])) do redis.call('ZREM', index, old) end
elseif stored[2] == 'closed' then
  redis.call('ZREM', closedIndex, outTradeNo)
end

-- 3. The order, whole: DEL first, so that a field the new order leaves out (a null) is gone.
local order = {}
for i = FIELDS, #ARGV, 2 do order[ARGV[i]] = ARGV[i + 1] end
redis.call('DEL', key)
redis.call('HSET', key, unpack(ARGV, FIELDS))

-- 4. Into the indexes of every order; into those of the open orders while it is open, or the
--    closed-order index while closed.
local filed = member(order.createdAt)
redis.call('ZADD', prefix .. 'oa', 0, filed)
redis.call('ZADD', prefix .. 'oas:' .. order.status, 0, filed)
redis.call('ZADD', prefix .. 'oau:' .. order.userId, 0, filed)
if order.status == 'open' then
  local new = member(order.createdAt)
  for _, index in ipairs(indexes(order.userId, order.sceneStr)) do redis.call('ZADD', index, 0, new) end
elseif order.status == 'closed' then
  redis.call('ZADD', closedIndex, order.expiresAt, outTradeNo)
end
if receiptId ~= '' then redis.call('SET', receiptKey, '1', 'PX', receiptTtl) end
return 1
`
