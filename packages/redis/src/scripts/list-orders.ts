/**
 * The list-orders script (`Store.listOpenOrders`): reads a page of one open-order index and the
 * orders it names, applying the one filter the index does not, in one round trip and without
 * writing (`flags=no-writes`).
 *
 * ```
 * KEYS[1]  <prefix>seq, to check the layout (like every script) and route the call to the
 *          prefix's slot on a Cluster.
 * KEYS[2]  the index to read: <prefix>os:<sceneStr>, <prefix>ou:<userId> or <prefix>oo
 *          (`orders.ts` picks the most selective one the query allows).
 * ARGV     prefix, min, max (ZRANGE BYLEX bounds: the cursor and createdAtOrBefore), limit,
 *          userId ('' when the index already selects the user, or the query names none)
 * ```
 *
 * Reply: `{ outTradeNo, { field, value, ... }, outTradeNo, { ... }, ... }`, each order with its
 * whole hash (HGETALL), in index order, at most `limit` of them.
 *
 * Index members (`<createdAt zero-padded to 16 digits>:<outTradeNo>`, all at score 0) sort bytewise
 * in the order the contract asks for, so the cursor and the createdAt bound are exact lex bounds,
 * computed by the client, and the index itself does the ordering and the paging. The only filter
 * left to apply here is the user, when a query names both a scene and a user (the scene's index is
 * read: a scene has few orders); the index is then read in batches until `limit` orders matched.
 * The stored status is checked too: an order is answered only while it is `open`, whatever an
 * index says.
 *
 * @module
 */
import { LAYOUT_GUARD } from './layout-guard'

/** The list-orders script's source. */
export const LIST_ORDERS_SCRIPT = `#!lua flags=no-writes
${LAYOUT_GUARD}
local prefix, min, max, limit, userId = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5]
-- Without a user filter every member read is answered (barring a stray one), so one batch of
-- 'limit' suffices; with one, read more at a time so that a scene's orders take few calls.
local batch = limit
if userId ~= '' then batch = math.max(limit, 100) end

local reply, found = {}, 0
while true do
  local members = redis.call('ZRANGE', KEYS[2], min, max, 'BYLEX', 'LIMIT', 0, batch)
  for _, m in ipairs(members) do
    -- The outTradeNo follows the 16 digits and the ':'.
    local outTradeNo = string.sub(m, 18)
    local hash = redis.call('HGETALL', prefix .. 'od:' .. outTradeNo)
    local status, owner
    for i = 1, #hash, 2 do
      if hash[i] == 'status' then status = hash[i + 1] elseif hash[i] == 'userId' then owner = hash[i + 1] end
    end
    if status == 'open' and (userId == '' or owner == userId) then
      reply[#reply + 1] = outTradeNo
      reply[#reply + 1] = hash
      found = found + 1
      if found >= limit then return reply end
    end
  end
  if #members < batch then return reply end
  min = '(' .. members[#members]
end
`
