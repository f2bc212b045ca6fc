/**
 * The load script: a read-only script for the loads that must follow a reference inside Redis
 * (openid → user id → user and its live authorizations; scene id → latest session token →
 * session), so that they still cost one round trip. Loads of a scene alone or a session alone do
 * not use it: they are a single GET (`redis-store.ts`).
 *
 * ```
 * KEYS[1]  <prefix>seq, only to route the call to the prefix's slot on a Cluster (not read).
 * ARGV     prefix, sceneStr, userId, openid, sessionToken, latestSessionOfScene ('' = not asked)
 * ```
 *
 * Reply: `{ scene, userId, user, liveAuthorizations, session, latestToken, latestSession }`, each a
 * packed value or nil (`false` in Lua), `userId` the id the user was found under, and
 * `liveAuthorizations` the flat HGETALL of the user's live hash.
 *
 * `flags=no-writes` lets Redis run it where writes are refused (a replica, an out-of-memory server).
 *
 * @module
 */
export const LOAD_SCRIPT = `#!lua flags=no-writes
local prefix = ARGV[1]
local function get(key)
  return redis.call('GET', key)
end

local scene = false
if ARGV[2] ~= '' then scene = get(prefix .. 's:' .. ARGV[2]) end

local userId = ARGV[3]
if userId == '' and ARGV[4] ~= '' then userId = get(prefix .. 'o:' .. ARGV[4]) or '' end
local user, authorizations = false, {}
if userId ~= '' then
  user = get(prefix .. 'u:' .. userId)
  if user then authorizations = redis.call('HGETALL', prefix .. 'al:' .. userId) end
end

local session = false
if ARGV[5] ~= '' then session = get(prefix .. 't:' .. ARGV[5]) end

local latestToken, latest = false, false
if ARGV[6] ~= '' then
  latestToken = get(prefix .. 'ls:' .. ARGV[6])
  if latestToken then latest = get(prefix .. 't:' .. latestToken) end
end

return { scene, user and userId or false, user, authorizations, session, latestToken, latest }
`
