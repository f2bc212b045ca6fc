/**
 * The scripts of the reminders' indexes (`Store.listActiveAuthorizations`): two read-only scripts,
 * one per type, each reading one range of its index and the records it names in one round trip,
 * and the script that builds the indexes on a prefix written before they existed. Every key is
 * built from the prefix (ARGV[1]) and shares the prefix's hash slot, as in every script here.
 *
 * ```
 * ACTIVE_TIME_SCRIPT    KEYS[1] <prefix>seq
 *                       ARGV prefix, endFrom, endBefore (scores), afterEndAt (a score, '' for none),
 *                       afterId, limit
 *   Reply: { id, value, id, value, ... } by endAt then id, at most `limit`; or 'unindexed'.
 *   <prefix>ae holds the active time authorizations, score endAt, member the zero-padded id, so
 *   members of one score sort by id and the zset is in the answer's order. The page is a range of
 *   ranks: from the first member at or after endFrom, or just after the cursor if that is later,
 *   to the last before endBefore, at most `limit`. Each bound is a ZCOUNT (O(log n)); the cursor's
 *   place among the members of its endAt is found by a binary search over their ranks (a tie of
 *   any size costs a few ZRANGEs of one member), since ZRANGE cannot combine a score with a member
 *   bound. Then one ZRANGE of the page and one HMGET of its records.
 *
 * ACTIVE_POINTS_SCRIPT  KEYS[1] <prefix>seq
 *                       ARGV prefix, pointsBelow (a score), afterId, limit
 *   Reply: { id, value, ... } by id, at most `limit`; or 'unindexed'.
 *   <prefix>ap holds the active points authorizations, score remainingPoints. The answer is by id,
 *   its condition a range of scores: the range (0, pointsBelow) is read whole (the low ones only,
 *   never the others, however many), those after the cursor sorted by id here, the first `limit`
 *   read with one HMGET.
 *
 * BUILD_ACTIVE_INDEX_SCRIPT  KEYS[1] <prefix>seq
 *                       ARGV prefix, users (how many user ids one run indexes)
 *   Reply: 1 when users are left to index, 0 when the indexes are complete (or nothing is stored).
 *   A prefix written before the indexes existed has no `ai` field in <prefix>seq. The first run
 *   deletes whatever <prefix>ae and <prefix>ap hold and sets the cursor `aib` to user 1; each run
 *   then files the active authorizations of the next `users` user ids (users are never deleted,
 *   and ids run from 1 to the `u` counter), from each user's active set and their records, and moves
 *   the cursor; the last one deletes it and sets `ai`. A run is atomic; commits between runs keep
 *   the indexes of what they write (the commit script always does), so the users indexed already
 *   stay right and the others are read as they are when their run comes. Several processes may
 *   build at once: they share the cursor. This is the one place a script decodes an
 *   authorization record (`userId|status|type|startAt|endAt|remainingPoints|...`, codec.ts).
 * ```
 *
 * A read on a prefix whose indexes are not complete answers 'unindexed' (the caller builds them
 * and reads again), never a partial page. A prefix with nothing stored answers an empty page.
 *
 * @module
 */
import { ACTIVE_INDEX_CURSOR, ACTIVE_INDEXED } from '../keys'
import { LAYOUT_GUARD } from './layout-guard'

/** Lua: answer 'unindexed' when the prefix holds data whose reminders' indexes are not complete. */
const INDEX_CHECK = `
if redis.call('HEXISTS', KEYS[1], '${ACTIVE_INDEXED}') == 0 and redis.call('EXISTS', KEYS[1]) == 1 then return 'unindexed' end
`

/** Lua: `{ id, value, ... }` of `members` (padded members or ids), in their order (a missing record left out). */
const PAGE_OF = `
local function pageOf(prefix, members)
  if #members == 0 then return {} end
  local ids = {}
  for i, m in ipairs(members) do ids[i] = string.format('%d', tonumber(m)) end
  local values = redis.call('HMGET', prefix .. 'a', unpack(ids))
  local reply = {}
  for i, id in ipairs(ids) do
    if values[i] then
      reply[#reply + 1] = id
      reply[#reply + 1] = values[i]
    end
  end
  return reply
end
`

/** The time read's source. */
export const ACTIVE_TIME_SCRIPT = `#!lua flags=no-writes
${LAYOUT_GUARD}
${INDEX_CHECK}
${PAGE_OF}
local prefix, endFrom, endBefore, afterEnd, afterId, limit = ARGV[1], ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5]), tonumber(ARGV[6])
local key = prefix .. 'ae'
-- Ranks, from 0: members sort by score (endAt), then by member (the zero-padded id).
local start = redis.call('ZCOUNT', key, '-inf', '(' .. endFrom)
local stop = redis.call('ZCOUNT', key, '-inf', '(' .. endBefore)
if afterEnd ~= '' then
  -- The members ending at the cursor's endAt are ranks [lo, hi); the first of them with an id above
  -- the cursor's, by binary search, or hi.
  local lo = redis.call('ZCOUNT', key, '-inf', '(' .. afterEnd)
  local hi = lo + redis.call('ZCOUNT', key, afterEnd, afterEnd)
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if tonumber(redis.call('ZRANGE', key, mid, mid)[1]) <= afterId then lo = mid + 1 else hi = mid end
  end
  if lo > start then start = lo end
end
if stop > start + limit then stop = start + limit end
if stop <= start then return {} end
return pageOf(prefix, redis.call('ZRANGE', key, start, stop - 1))
`

/** The points read's source. */
export const ACTIVE_POINTS_SCRIPT = `#!lua flags=no-writes
${LAYOUT_GUARD}
${INDEX_CHECK}
${PAGE_OF}
local prefix, pointsBelow, afterId, limit = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local low = {}
for _, m in ipairs(redis.call('ZRANGE', prefix .. 'ap', '(0', '(' .. pointsBelow, 'BYSCORE')) do
  local id = tonumber(m)
  if id > afterId then low[#low + 1] = id end
end
table.sort(low)
local page = {}
for i = 1, math.min(limit, #low) do page[i] = low[i] end
return pageOf(prefix, page)
`

/** The build script's source. */
export const BUILD_ACTIVE_INDEX_SCRIPT = `#!lua
${LAYOUT_GUARD}
if redis.call('HEXISTS', KEYS[1], '${ACTIVE_INDEXED}') == 1 or redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local prefix, users = ARGV[1], tonumber(ARGV[2])
local byEnd, byPoints = prefix .. 'ae', prefix .. 'ap'
local from = redis.call('HGET', KEYS[1], '${ACTIVE_INDEX_CURSOR}')
if not from then
  -- The first run: whatever the indexes hold was written beside commits that did not keep them.
  redis.call('DEL', byEnd, byPoints)
  from = '1'
end
local last = tonumber(redis.call('HGET', KEYS[1], 'u') or '0')
local id = tonumber(from)
local stop = math.min(last, id + users - 1)
while id <= stop do
  local ids = redis.call('SMEMBERS', prefix .. 'aa:' .. string.format('%d', id))
  if #ids > 0 then
    local values = redis.call('HMGET', prefix .. 'a', unpack(ids))
    for i, authId in ipairs(ids) do
      local value = values[i]
      if value then
        -- userId|status|type|startAt|endAt|remainingPoints|...
        local status, kind, endAt, points = string.match(value, '^[^|]*|([^|]*)|([^|]*)|[^|]*|([^|]*)|([^|]*)|')
        local m = string.rep('0', 16 - #authId) .. authId
        if status == 'a' and kind == 't' and tonumber(endAt) then
          redis.call('ZADD', byEnd, endAt, m)
        elseif status == 'a' and kind == 'p' and tonumber(points) then
          redis.call('ZADD', byPoints, points, m)
        end
      end
    end
  end
  id = id + 1
end
if id > last then
  redis.call('HDEL', KEYS[1], '${ACTIVE_INDEX_CURSOR}')
  redis.call('HSET', KEYS[1], '${ACTIVE_INDEXED}', '1')
  return 0
end
redis.call('HSET', KEYS[1], '${ACTIVE_INDEX_CURSOR}', string.format('%d', id))
return 1
`
