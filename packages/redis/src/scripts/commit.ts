/**
 * The commit script: checks a change set's expectations, then applies its writes, in one atomic
 * step of the Redis server. It knows the key layout (`keys.ts`) and where store-assigned ids go in
 * the packed values (`codec.ts`); it knows nothing of the rules (docs/behaviour.md) — which scan is
 * processed, which authorization becomes active — core decided all of that before calling it.
 *
 * Arguments are positional and built by `commit-args.ts`. Only the parts a change set has are sent
 * (each argument costs the client and the server a little), each introduced by a one-letter tag:
 *
 * ```
 * KEYS[1]  <prefix>seq, the id counters. Every other key is built from ARGV[1] (the prefix); they
 *          share KEYS[1]'s hash slot because the prefix carries the hash tag, which is what makes
 *          the undeclared keys legal on a Cluster.
 * ARGV     prefix, receiptId ('' = no receipt), receiptTtlMs, then in this order, each optional:
 *   's'    scene:   op ('i' | 'u'), sceneStr, expectedVersion, version, id, userRef, tail, ttl
 *   'u'    user:    op ('i' | 'u'), id, openid, expectedVersion, value,
 *                   n, then n × (live '1'|'0', value)          -- authorizations to insert
 *                   m, then m × (id, live '1'|'0', value)      -- authorizations to replace
 *   't'    session: token, userRef, sceneId, tail, ttl
 * userRef  '' for null, '@' for the user this commit inserts (NEW_USER), else a user id.
 * ttl      milliseconds, 'keep' (KEEPTTL) or '' (no expiry); never 0 (see expiry.ts).
 * ```
 *
 * Reply: `ok|<sceneId>|<userId>|<sessionId>|<authId>,<authId>...` (empty where nothing of that kind
 * was inserted) or `conflict|scene` / `conflict|user`.
 *
 * The `#!lua` line (Redis 7+) makes the server refuse the whole script up front when it is out of
 * memory, instead of failing at the first write and leaving the earlier ones applied. All checks
 * come before the first write for the same reason.
 *
 * @module
 */
export const COMMIT_SCRIPT = `#!lua
-- Arguments are read one at a time, in order (Lua leaves the evaluation order of "f(), f()" open).
local argi = 0
local function arg()
  argi = argi + 1
  return ARGV[argi]
end

local prefix = arg()
local receiptId = arg()
local receiptTtl = arg()

-- A re-sent commit (its first reply was lost with the connection) answers what it answered then.
local receiptKey = prefix .. 'r:' .. receiptId
if receiptId ~= '' then
  local done = redis.call('GET', receiptKey)
  if done then return done end
end

local scene, user, session
local inserts, updates = {}, {}
while argi < #ARGV do
  local tag = arg()
  if tag == 's' then
    scene = {}
    for _, name in ipairs({ 'op', 'str', 'expected', 'version', 'id', 'user', 'tail', 'ttl' }) do scene[name] = arg() end
  elseif tag == 'u' then
    user = {}
    for _, name in ipairs({ 'op', 'id', 'openid', 'expected', 'value' }) do user[name] = arg() end
    for k = 1, tonumber(arg()) do
      local live = arg()
      inserts[k] = { live = live, value = arg() }
    end
    for k = 1, tonumber(arg()) do
      local id = arg()
      local live = arg()
      updates[k] = { id = id, live = live, value = arg() }
    end
  elseif tag == 't' then
    session = {}
    for _, name in ipairs({ 'token', 'user', 'scene', 'tail', 'ttl' }) do session[name] = arg() end
  else
    return redis.error_reply('scanauth commit: unknown section ' .. tostring(tag))
  end
end

-- 1. Expectations, all before the first write. The version is the field before the first '|' of
--    a scene or user value.
local function version(value)
  return string.match(value, '^[^|]*')
end

local sceneKey
if scene then
  sceneKey = prefix .. 's:' .. scene.str
  if scene.op == 'i' then
    if redis.call('EXISTS', sceneKey) == 1 then return 'conflict|scene' end
  else
    local current = redis.call('GET', sceneKey)
    if not current or version(current) ~= scene.expected then return 'conflict|scene' end
  end
end

if user then
  if user.op == 'i' then
    if redis.call('EXISTS', prefix .. 'o:' .. user.openid) == 1 then return 'conflict|user' end
  else
    local current = redis.call('GET', prefix .. 'u:' .. user.id)
    if not current or version(current) ~= user.expected then return 'conflict|user' end
  end
end

-- 2. Writes.
local function nextId(kind)
  return string.format('%d', redis.call('HINCRBY', KEYS[1], kind, 1))
end

local function put(key, value, ttl)
  if ttl == 'keep' then
    redis.call('SET', key, value, 'KEEPTTL')
  elseif ttl == '' then
    redis.call('SET', key, value)
  else
    redis.call('SET', key, value, 'PX', ttl)
  end
end

local insertedUser, authIds = '', {}
if user then
  if user.op == 'i' then
    user.id = nextId('u')
    insertedUser = user.id
    redis.call('SET', prefix .. 'o:' .. user.openid, user.id)
  end
  redis.call('SET', prefix .. 'u:' .. user.id, user.value)
  -- Live (pending, active) and retired authorizations live in two hashes, so a load reads only
  -- the live ones however long the user's history grows. Core's status decides which (the
  -- '1'/'0' flag); the script only files the record.
  local live, retired = prefix .. 'al:' .. user.id, prefix .. 'ar:' .. user.id
  for k, a in ipairs(inserts) do
    local id = nextId('a')
    authIds[k] = id
    if a.live == '1' then redis.call('HSET', live, id, a.value) else redis.call('HSET', retired, id, a.value) end
  end
  for _, a in ipairs(updates) do
    if a.live == '1' then
      redis.call('HSET', live, a.id, a.value)
      redis.call('HDEL', retired, a.id)
    else
      redis.call('HSET', retired, a.id, a.value)
      redis.call('HDEL', live, a.id)
    end
  end
end

local function resolve(ref)
  if ref == '@' then return insertedUser end
  return ref
end

local insertedScene = ''
if scene then
  if scene.op == 'i' then
    scene.id = nextId('s')
    insertedScene = scene.id
  end
  put(sceneKey, scene.version .. '|' .. scene.id .. '|' .. resolve(scene.user) .. '|' .. scene.tail, scene.ttl)
end

local insertedSession = ''
if session then
  insertedSession = nextId('t')
  local value = insertedSession .. '|' .. resolve(session.user) .. '|' .. session.scene .. '|' .. session.tail
  put(prefix .. 't:' .. session.token, value, session.ttl)
  -- Ids only grow, so the session inserted last is the scene's latest (highest id).
  put(prefix .. 'ls:' .. session.scene, session.token, session.ttl)
end

local reply = 'ok|' .. insertedScene .. '|' .. insertedUser .. '|' .. insertedSession .. '|' .. table.concat(authIds, ',')
if receiptId ~= '' then redis.call('SET', receiptKey, reply, 'PX', receiptTtl) end
return reply
`
