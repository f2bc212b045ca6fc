/**
 * Running a Lua script by its SHA1, without touching the application's client (no
 * `defineCommand`): EVALSHA first, and on `NOSCRIPT` (a fresh server, a failover to a replica that
 * never saw the script, a `SCRIPT FLUSH`) EVAL with the source, which also caches it again. A
 * script that was not found did not run, so falling back to EVAL cannot apply a commit twice.
 *
 * @module
 */
import { createHash } from 'node:crypto'

/** The two commands a script needs, as both ioredis `Redis` and `Cluster` offer them. */
export interface ScriptClient {
  evalsha(sha: string, numKeys: number, ...args: string[]): Promise<unknown>
  eval(source: string, numKeys: number, ...args: string[]): Promise<unknown>
}

/** A Lua script, hashed once, run by SHA1 with a fallback to its source. */
export class LuaScript {
  /** SHA1 of the source, as Redis names the cached script. */
  readonly sha: string

  constructor(readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex')
  }

  /** Runs the script with `keys` and `args`. Errors other than NOSCRIPT propagate. */
  async run(client: ScriptClient, keys: readonly string[], args: readonly string[]): Promise<unknown> {
    try {
      return await client.evalsha(this.sha, keys.length, ...keys, ...args)
    } catch (error) {
      if (!isNoScript(error)) throw error
      return client.eval(this.source, keys.length, ...keys, ...args)
    }
  }
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT')
}
