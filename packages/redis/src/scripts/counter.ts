/**
 * The counter script (`Store.incrementCounter`): adds one to a counter, or starts it again at 1,
 * in one script run, so concurrent increments from any number of processes each get their own
 * value.
 *
 * ```
 * KEYS[1]  <prefix>c:<key>, the counter (in the prefix's slot on a Cluster, like every key)
 * ARGV     expiresAt, now, ttl (milliseconds, or '' for no TTL)
 * ```
 *
 * Reply: the new count; nil when the key holds a value this store did not write.
 *
 * The value is `count|expiresAt`. The stored `expiresAt` is compared with the caller's `now`, both
 * from the service's injected clock, so a counter restarts exactly when the Store contract says
 * (`expiresAt <= now`), whatever the server's clock says. The TTL is only there to free the memory
 * of a dead counter: `expiresAt − now` of the call that started it (`RedisStore.incrementCounter`),
 * relative, never an absolute server time; an increment keeps it (`KEEPTTL`), a restart replaces it.
 *
 * @module
 */

/** The counter script's source. */
export const COUNTER_SCRIPT = `#!lua
local key, expiresAt, now, ttl = KEYS[1], ARGV[1], tonumber(ARGV[2]), ARGV[3]
local value = redis.call('GET', key)
if value then
  local count, stored = string.match(value, '^(%d+)|(.+)$')
  local deadline = tonumber(stored)
  if not deadline then return false end
  if deadline > now then
    count = tonumber(count) + 1
    redis.call('SET', key, string.format('%d', count) .. '|' .. stored, 'KEEPTTL')
    return count
  end
end
if ttl == '' then
  redis.call('SET', key, '1|' .. expiresAt)
else
  redis.call('SET', key, '1|' .. expiresAt, 'PX', ttl)
end
return 1
`
