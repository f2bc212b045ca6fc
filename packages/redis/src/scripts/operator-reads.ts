/**
 * The read-only scripts of the operator reads (`Store.listLiveSessions`, `listUsers`,
 * `listOrders`): each reads one index of the key layout (`keys.ts`) and the records it names, in
 * one round trip and without writing (`flags=no-writes`). Every key is built from the prefix
 * (ARGV[1]) or declared, and shares the prefix's hash slot, as in every script here.
 *
 * ```
 * LIVE_SESSIONS_SCRIPT  KEYS[1] <prefix>seq, KEYS[2] <prefix>us:<userId>
 *                       ARGV prefix, now, beforeId ('' for none), limit
 *   Reply: { token, value, token, value, ... }, newest first (highest id), at most `limit`.
 *   The user's session index holds the tokens of its sessions scored by expiresAt, the ended ones
 *   taken out; its members above `now` are read whole (a user's live sessions: one per sign-in
 *   within the session lifetime), each session's stored value checked (live at `now`, below the
 *   cursor), then sorted by id here: the index is not in id order.
 *
 * LIST_USERS_SCRIPT     KEYS[1] <prefix>seq
 *                       ARGV prefix, afterId, limit
 *   Reply: { id, value, id, value, ... } by id, at most `limit`. User ids are assigned by the
 *   commit script from the `u` counter of <prefix>seq, one per user inserted, and users are never
 *   deleted: the ids after the cursor up to that counter are read in turn, `limit` GETs a page.
 *
 * LIST_ALL_ORDERS_SCRIPT  KEYS[1] <prefix>seq, KEYS[2] the index: <prefix>oau:<userId>,
 *                       <prefix>oas:<status> or <prefix>oa (`operator-reads.ts` picks it)
 *                       ARGV prefix, min, max (ZRANGE BYLEX bounds), limit, userId ('' for any),
 *                       status ('' for any)
 *   Reply: { outTradeNo, { field, value, ... }, ... } in index order, at most `limit`. The members
 *   (`<createdAt zero-padded to 16 digits>:<outTradeNo>`) sort as the contract asks, so the bounds
 *   do the cursor and the time range; the stored order decides whether it matches (a user's index
 *   read for one status is filtered here, in batches until `limit` matched).
 * ```
 *
 * @module
 */
import { LAYOUT_GUARD } from './layout-guard'

/** The live-sessions script's source. */
export const LIVE_SESSIONS_SCRIPT = `#!lua flags=no-writes
${LAYOUT_GUARD}
local prefix, now, beforeId, limit = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local live = {}
for _, token in ipairs(redis.call('ZRANGE', KEYS[2], '(' .. ARGV[2], '+inf', 'BYSCORE')) do
  local value = redis.call('GET', prefix .. 't:' .. token)
  if value then
    -- id|userId|sceneId|createdAt|expiresAt|deviceId (codec.ts)
    local id, expiresAt = string.match(value, '^([^|]*)|[^|]*|[^|]*|[^|]*|([^|]*)')
    id, expiresAt = tonumber(id), tonumber(expiresAt)
    if id and expiresAt and expiresAt > now and (not beforeId or id < beforeId) then
      live[#live + 1] = { id, token, value }
    end
  end
end
table.sort(live, function(a, b) return a[1] > b[1] end)
local reply = {}
for i = 1, math.min(limit, #live) do
  reply[#reply + 1] = live[i][2]
  reply[#reply + 1] = live[i][3]
end
return reply
`

/** The list-users script's source. */
export const LIST_USERS_SCRIPT = `#!lua flags=no-writes
${LAYOUT_GUARD}
local prefix, afterId, limit = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local last = tonumber(redis.call('HGET', KEYS[1], 'u') or '0')
local id = math.max(1, math.floor(afterId) + 1)
local reply, found = {}, 0
while found < limit and id <= last do
  local key = string.format('%d', id)
  local value = redis.call('GET', prefix .. 'u:' .. key)
  if value then
    reply[#reply + 1] = key
    reply[#reply + 1] = value
    found = found + 1
  end
  id = id + 1
end
return reply
`

/** The list-orders (of any status) script's source. */
export const LIST_ALL_ORDERS_SCRIPT = `#!lua flags=no-writes
${LAYOUT_GUARD}
local prefix, min, max, limit, userId, status = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5], ARGV[6]
-- Every member read matches (barring a stray one) unless the index is wider than the query: then
-- read more at a time, so that a user's orders of one status take few calls.
local batch = limit
if userId ~= '' and status ~= '' then batch = math.max(limit, 100) end

local reply, found = {}, 0
while true do
  local members = redis.call('ZRANGE', KEYS[2], min, max, 'BYLEX', 'LIMIT', 0, batch)
  for _, m in ipairs(members) do
    -- The outTradeNo follows the 16 digits and the ':'.
    local outTradeNo = string.sub(m, 18)
    local hash = redis.call('HGETALL', prefix .. 'od:' .. outTradeNo)
    local stored, owner
    for i = 1, #hash, 2 do
      if hash[i] == 'status' then stored = hash[i + 1] elseif hash[i] == 'userId' then owner = hash[i + 1] end
    end
    if stored and (status == '' or stored == status) and (userId == '' or owner == userId) then
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
