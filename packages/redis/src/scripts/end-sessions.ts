/**
 * The end-sessions script (`Store.endSessions`): ends one session by its token, or every session
 * of a user, in one script run. Ending a session rewrites its packed value with `expiresAt = at`
 * (the service's clock), so that from `at` on core treats it as expired everywhere
 * (docs/behaviour.md, B-revoke-1…4); the key, and the scene's latest-session pointer when it names
 * that token, then keep only the grace period as TTL (`expiry.ts`: `at − at + grace`, computed by
 * the caller; never the server's clock).
 *
 * ```
 * KEYS[1]  <prefix>seq, to route the call to the prefix's slot on a Cluster and to check the layout.
 * ARGV     prefix, mode ('t' by token | 'u' by user id), the token or user id, at, ttl
 * ```
 *
 * Reply: how many sessions it ended (those live at `at`: `expiresAt > at`).
 *
 * A user's sessions are found through `us:<userId>` (a zset scored by each session's expiresAt):
 * only the entries above `at` are visited, so the cost follows the live sessions, not the history.
 * Entries at or below `at`, entries whose session key is gone (expired by its TTL), and the
 * sessions ended here are dropped from it.
 *
 * @module
 */
import { LAYOUT_GUARD } from './layout-guard'

/** The end-sessions script's source. */
export const END_SESSIONS_SCRIPT = `#!lua
${LAYOUT_GUARD}
local prefix, mode, target, at, ttl = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local atNumber = tonumber(at)

-- Ends the session of token when it is live at 'at': 1 if it did, 0 if it was not live, and
-- false when its key is gone.
local function finish(token)
  local key = prefix .. 't:' .. token
  local value = redis.call('GET', key)
  if not value then return false end
  -- id|userId|sceneId|createdAt|expiresAt|deviceId: replace the fifth field.
  local head, userId, sceneId, expiresAt, rest = string.match(value, '^([^|]*|([^|]*)|([^|]*)|[^|]*|)([^|]*)(.*)$')
  local expires = tonumber(expiresAt)
  if not expires or expires <= atNumber then return 0 end
  redis.call('SET', key, head .. at .. rest, 'PX', ttl)
  local latest = prefix .. 'ls:' .. sceneId
  if redis.call('GET', latest) == token then redis.call('PEXPIRE', latest, ttl) end
  redis.call('ZREM', prefix .. 'us:' .. userId, token)
  return 1
end

if mode == 't' then return finish(target) or 0 end

local index = prefix .. 'us:' .. target
local ended = 0
for _, token in ipairs(redis.call('ZRANGEBYSCORE', index, '(' .. at, '+inf')) do
  local done = finish(token)
  if done then ended = ended + done else redis.call('ZREM', index, token) end
end
redis.call('ZREMRANGEBYSCORE', index, '-inf', at)
return ended
`
