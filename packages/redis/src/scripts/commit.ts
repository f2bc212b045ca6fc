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
 *   's'    scene:   op ('i' | 'u'), sceneStr, expectedVersion, version, id, userRef, tail, ttl, ticketHash
 *   'u'    user:    op ('i' | 'u'), id, openid, expectedVersion, value,
 *                   n, then n × (index, score, tail)       -- authorizations to insert
 *                   m, then m × (id, index, score, tail)   -- authorizations to replace
 *   't'    session: token, userRef, sceneId, tail, ttl, expiresAt, createdAt
 *   'l'    ledger:  n, then n × (userRef, authRef, tail)
 *   'i'    idempotency: key, authRef ('' = none), tail
 * userRef  '' for null, '@' for the user this commit inserts (NEW_USER), else a user id.
 * authRef  an authorization id, or '#i' for the i-th (from 0) authorization this commit inserts.
 * index    where an authorization is filed (codec.ts, authorizationFiling): 'e' active set and
 *          <prefix>ae (an active time one; score: its endAt), 'p' active set and <prefix>ap (an
 *          active points one; score: its remainingPoints), 'a' active set alone, 'q' queue (score:
 *          its createdAt), '-' none. The script never decodes a record to decide it.
 * ttl      milliseconds, 'keep' (KEEPTTL) or '' (no expiry); never 0 (see expiry.ts).
 * ticketHash  the digest of the scene's confirm ticket, '' when it has no confirmation.
 * ```
 *
 * A scene written with a ticketHash is filed under it: `SET <prefix>ct:<ticketHash> <sceneStr>`
 * (docs/behaviour.md B-confirm-6), in the same script run as the scene, so no load can see one
 * without the other. The index key takes the scene key's expiry as it stands after the write
 * (`PEXPIRETIME`, then `PXAT`; none when the scene has none): the scene's TTL is often `keep`
 * (a scan, a decision, the CSRF digest), which on a new index key would mean "never expires", and
 * when a decision with a session moves the scene's deadline the index moves with it. So the
 * ticket finds its scene, decided or not, exactly until Redis frees the scene. A ticketHash never
 * changes once set (core's rule), so there is no stale index key to remove; a load checks the
 * scene's ticketHash anyway (`load.ts`).
 *
 * A commit that writes a scene (inserted or updated) ends with `PUBLISH <prefix>scenes <sceneStr>`,
 * after all of its writes: that is how every process's `watchScenes` learns of it, whichever
 * process committed (`scene-subscription.ts`). A re-sent commit answered from its receipt does
 * not publish again; the first run did.
 *
 * Reply: `ok|<sceneId>|<userId>|<sessionId>|<authId>,<authId>...` (empty where nothing of that kind
 * was inserted) or `conflict|scene` / `conflict|user` / `conflict|idempotency`. Ledger entries get
 * ids too (counter `l`), in the order given, but nobody asks for them back.
 *
 * The `#!lua` line (Redis 7+) makes the server refuse the whole script up front when it is out of
 * memory, instead of failing at the first write and leaving the earlier ones applied. All checks
 * come before the first write for the same reason.
 *
 * @module
 */
import { LAYOUT_GUARD, LAYOUT_MARK } from './layout-guard'

/** The commit script's source. */
export const COMMIT_SCRIPT = `#!lua
${LAYOUT_GUARD}
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

local scene, user, session, idempotency
local inserts, updates, ledger = {}, {}, {}
local function fields(names)
  local t = {}
  for _, name in ipairs(names) do t[name] = arg() end
  return t
end
while argi < #ARGV do
  local tag = arg()
  if tag == 's' then
    scene = fields({ 'op', 'str', 'expected', 'version', 'id', 'user', 'tail', 'ttl', 'ticket' })
  elseif tag == 'u' then
    user = fields({ 'op', 'id', 'openid', 'expected', 'value' })
    for k = 1, tonumber(arg()) do inserts[k] = fields({ 'index', 'score', 'tail' }) end
    for k = 1, tonumber(arg()) do updates[k] = fields({ 'id', 'index', 'score', 'tail' }) end
  elseif tag == 't' then
    session = fields({ 'token', 'user', 'scene', 'tail', 'ttl', 'expiresAt', 'createdAt' })
  elseif tag == 'l' then
    for k = 1, tonumber(arg()) do ledger[k] = fields({ 'user', 'auth', 'tail' }) end
  elseif tag == 'i' then
    idempotency = fields({ 'key', 'auth', 'tail' })
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

local idempotencyKey
if idempotency then
  idempotencyKey = prefix .. 'i:' .. idempotency.key
  if redis.call('EXISTS', idempotencyKey) == 1 then return 'conflict|idempotency' end
end

-- 2. Writes.
${LAYOUT_MARK}
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

-- A member of a queue or of a reminders' index: the id zero-padded to 16 digits, so equal scores
-- (createdAt, endAt, remainingPoints) sort by id.
local function member(id)
  return string.rep('0', 16 - #id) .. id
end

local insertedUser, authIds = '', {}
if user then
  if user.op == 'i' then
    user.id = nextId('u')
    insertedUser = user.id
    redis.call('SET', prefix .. 'o:' .. user.openid, user.id)
  end
  redis.call('SET', prefix .. 'u:' .. user.id, user.value)
  -- Every authorization is in one hash; the user's active set and queue hold only ids, so a load
  -- reads the active ones and the head of the queue however long the queue or the history grows.
  -- The active ones are also in the reminders' indexes of every user, by type: <prefix>ae by endAt,
  -- <prefix>ap by remainingPoints (listActiveAuthorizations reads them). Core's status and the
  -- record's type decide the index (e, p, a, q, -) and commit-args.ts the score; the script only
  -- files the record, so an authorization is in the right indexes as soon as the commit is.
  local all, active, queue = prefix .. 'a', prefix .. 'aa:' .. user.id, prefix .. 'aq:' .. user.id
  local byEnd, byPoints = prefix .. 'ae', prefix .. 'ap'
  local function file(id, a)
    redis.call('HSET', all, id, user.id .. '|' .. a.tail)
    if a.index == 'q' then
      redis.call('ZADD', queue, a.score, member(id))
    elseif a.index ~= '-' then
      redis.call('SADD', active, id)
      if a.index == 'e' then
        redis.call('ZADD', byEnd, a.score, member(id))
      elseif a.index == 'p' then
        redis.call('ZADD', byPoints, a.score, member(id))
      end
    end
  end
  for k, a in ipairs(inserts) do
    authIds[k] = nextId('a')
    file(authIds[k], a)
  end
  for _, a in ipairs(updates) do
    -- Out of every index it is not filed in now; in the one it stays in, ZADD moves its score.
    local m = member(a.id)
    if a.index == 'q' or a.index == '-' then redis.call('SREM', active, a.id) end
    if a.index ~= 'q' then redis.call('ZREM', queue, m) end
    if a.index ~= 'e' then redis.call('ZREM', byEnd, m) end
    if a.index ~= 'p' then redis.call('ZREM', byPoints, m) end
    file(a.id, a)
  end
end

local function resolve(ref)
  if ref == '@' then return insertedUser end
  return ref
end

-- '#i' is the i-th (from 0) authorization inserted above; commit-args.ts checked that it exists.
local function resolveAuthorization(ref)
  if string.sub(ref, 1, 1) == '#' then return authIds[tonumber(string.sub(ref, 2)) + 1] end
  return ref
end

local insertedScene = ''
if scene then
  if scene.op == 'i' then
    scene.id = nextId('s')
    insertedScene = scene.id
  end
  put(sceneKey, scene.version .. '|' .. scene.id .. '|' .. resolve(scene.user) .. '|' .. scene.tail, scene.ttl)
  -- The confirm-ticket index, expiring when the scene does (PEXPIRETIME: -1 = no expiry).
  if scene.ticket ~= '' then
    local ticketKey, expiresAt = prefix .. 'ct:' .. scene.ticket, redis.call('PEXPIRETIME', sceneKey)
    if expiresAt > 0 then
      redis.call('SET', ticketKey, scene.str, 'PXAT', expiresAt)
    else
      redis.call('SET', ticketKey, scene.str)
    end
  end
end

local insertedSession = ''
if session then
  insertedSession = nextId('t')
  local owner = resolve(session.user)
  local value = insertedSession .. '|' .. owner .. '|' .. session.scene .. '|' .. session.tail
  put(prefix .. 't:' .. session.token, value, session.ttl)
  -- Ids only grow, so the session inserted last is the scene's latest (highest id).
  put(prefix .. 'ls:' .. session.scene, session.token, session.ttl)
  -- The user's sessions, for endSessions: sessions already over by this commit's clock go first,
  -- so the index holds little more than the live ones.
  local sessions = prefix .. 'us:' .. owner
  redis.call('ZREMRANGEBYSCORE', sessions, '-inf', session.createdAt)
  redis.call('ZADD', sessions, session.expiresAt, session.token)
end

for _, e in ipairs(ledger) do
  local id = nextId('l')
  redis.call('ZADD', prefix .. 'l:' .. resolve(e.user), id, id .. '|' .. resolveAuthorization(e.auth) .. '|' .. e.tail)
end

if idempotency then
  local ref = idempotency.auth
  if ref ~= '' then ref = resolveAuthorization(ref) end
  redis.call('SET', idempotencyKey, ref .. '|' .. idempotency.tail)
end

-- 3. Tell the watchers (watchScenes) in every process; PUBLISH names no key, so it is legal on a
--    Cluster too, and reaches subscribers on every node.
if scene then redis.call('PUBLISH', prefix .. 'scenes', scene.str) end

local reply = 'ok|' .. insertedScene .. '|' .. insertedUser .. '|' .. insertedSession .. '|' .. table.concat(authIds, ',')
if receiptId ~= '' then redis.call('SET', receiptKey, reply, 'PX', receiptTtl) end
return reply
`
