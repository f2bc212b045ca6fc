/**
 * The Lua lines every script starts with: refuse a prefix written by 0.1.0 (layout 1) instead of
 * misreading it. Layout 1 kept a user's pending and active authorizations in one hash
 * (`al:<userId>`); read with this layout, such a user would look as if it had none. The counters
 * hash `<p>seq` (KEYS[1] of every script) carries `layout`; a `seq` without it was written by
 * 0.1.0. One HGET per script run; a fresh prefix (no `seq` yet) passes, and its first commit
 * writes the field (`docs/redis.md`, "Upgrading from 0.1.0").
 *
 * @module
 */
import { ACTIVE_INDEXED, LAYOUT_VERSION } from '../keys'

/** Lua: returns an error reply when KEYS[1] holds counters of another layout. */
export const LAYOUT_GUARD = `
local layout = redis.call('HGET', KEYS[1], 'layout')
if layout ~= '${LAYOUT_VERSION}' and (layout or redis.call('EXISTS', KEYS[1]) == 1) then
  return redis.error_reply('scanauth: this key prefix holds data of key layout ' .. (layout or '1 (@scanauth/redis 0.1.0)') ..
    ', this store needs layout ${LAYOUT_VERSION}: use a fresh prefix (docs/redis.md, "Upgrading from 0.1.0")')
end
`

/**
 * Lua, for the commit script after its checks: marks a fresh prefix with the layout version, and as
 * one whose reminders' indexes (`<p>ae`, `<p>ap`) hold every active authorization: the commit
 * script has kept them since its first commit (`active-index.ts`).
 */
export const LAYOUT_MARK = `
if not layout then redis.call('HSET', KEYS[1], 'layout', '${LAYOUT_VERSION}', '${ACTIVE_INDEXED}', '1') end
`
