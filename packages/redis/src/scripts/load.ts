/**
 * The load script: a read-only script for the loads that must follow a reference inside Redis
 * (openid → user id → user, its active set and queue → their records; session token → session →
 * its user id → user, so that a session check is one round trip; scene id → latest session
 * token → session; confirm ticket digest → sceneStr → scene, B-confirm-6) or ask for several
 * parts at once, so that they still cost one round trip. Loads that are plain GETs of string
 * keys, or the HGET of one authorization, do not use it (`load.ts`), the device's poll being the
 * hottest read of all.
 *
 * ```
 * KEYS[1]  <prefix>seq, to route the call to the prefix's slot on a Cluster and to check the layout.
 * ARGV     prefix, sceneStr, userId, openid, sessionToken, latestSessionOfScene, wholeQueue ('1'),
 *          idempotencyKey, authorizationId, userOfSession ('1'), confirmTicketHash ('' = not asked)
 * ```
 *
 * Reply: `{ scene, userId, user, authorizations, session, latestToken, latestSession, idempotency,
 * authorization, sceneStr }`, each a packed value or nil (`false` in Lua), `userId` the id the
 * user was found under, and `authorizations` a flat `[id, value, id, value, ...]` of the user's
 * active ones and the head of its queue (`ZRANGE 0 0`), or its whole queue with `wholeQueue`: a user's load costs the
 * same few commands however long its queue is, unless it asks for the whole queue. `sceneStr` is
 * the one the scene was read under (the caller's, or the one the ticket index `<p>ct:` named), nil
 * with no scene.
 *
 * `flags=no-writes` lets Redis run it where writes are refused (a replica, an out-of-memory server).
 *
 * @module
 */
import { LAYOUT_GUARD } from './layout-guard'

/** The load script's source. */
export const LOAD_SCRIPT = `#!lua flags=no-writes
${LAYOUT_GUARD}
local prefix = ARGV[1]
local function get(key)
  return redis.call('GET', key)
end

-- A scene by its sceneStr, or by its confirm ticket's digest through the ticket index.
local sceneStr = ARGV[2]
if sceneStr == '' and ARGV[11] ~= '' then sceneStr = get(prefix .. 'ct:' .. ARGV[11]) or '' end
local scene = false
if sceneStr ~= '' then scene = get(prefix .. 's:' .. sceneStr) end

local session = false
if ARGV[5] ~= '' then session = get(prefix .. 't:' .. ARGV[5]) end

local userId = ARGV[3]
if userId == '' and ARGV[4] ~= '' then userId = get(prefix .. 'o:' .. ARGV[4]) or '' end
-- A session is id|userId|sceneId|createdAt|expiresAt|deviceId (codec.ts).
if userId == '' and ARGV[10] == '1' and session then userId = string.match(session, '^[^|]*|([^|]*)|') or '' end
local user, authorizations = false, {}
if userId ~= '' then
  user = get(prefix .. 'u:' .. userId)
  if user then
    local ids = redis.call('SMEMBERS', prefix .. 'aa:' .. userId)
    local last = 0
    if ARGV[7] == '1' then last = -1 end
    for _, member in ipairs(redis.call('ZRANGE', prefix .. 'aq:' .. userId, 0, last)) do
      ids[#ids + 1] = string.match(member, '^0*(%d+)$')
    end
    -- HMGET in slices: Lua's unpack() has a limit of a few thousand values (a whole queue).
    for from = 1, #ids, 1000 do
      local slice = { unpack(ids, from, math.min(from + 999, #ids)) }
      local values = redis.call('HMGET', prefix .. 'a', unpack(slice))
      for k, id in ipairs(slice) do
        if values[k] then
          authorizations[#authorizations + 1] = id
          authorizations[#authorizations + 1] = values[k]
        end
      end
    end
  end
end

local latestToken, latest = false, false
if ARGV[6] ~= '' then
  latestToken = get(prefix .. 'ls:' .. ARGV[6])
  if latestToken then latest = get(prefix .. 't:' .. latestToken) end
end

local idempotency = false
if ARGV[8] ~= '' then idempotency = get(prefix .. 'i:' .. ARGV[8]) end

local authorization = false
if ARGV[9] ~= '' then authorization = redis.call('HGET', prefix .. 'a', ARGV[9]) end

return { scene, user and userId or false, user, authorizations, session, latestToken, latest, idempotency, authorization, scene and sceneStr or false }
`
