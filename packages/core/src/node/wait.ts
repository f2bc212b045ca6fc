/**
 * For the Node framework middlewares (Express, Koa, a bare `node:http` server): which requests may
 * wait, and the signal a waiting request needs, aborted when the client goes away.
 *
 * @module
 */
import type { ServerResponse } from 'node:http'

/**
 * Whether a request may wait (docs/behaviour.md B-wait-2, B-wait-3): the event stream, or a status
 * poll with `wait`. Only these get a signal, so a plain poll costs what it did (no controller, no
 * listener).
 */
export function mayWait(path: string, query: unknown): boolean {
  return path.endsWith('/events') || (query as Record<string, unknown> | undefined)?.wait !== undefined
}

/**
 * A signal aborted when the connection closes before the response is finished: the client went
 * away, so its wait must end and release what it holds (B-wait-4). A response that finishes first
 * also emits `close`; `writableFinished` tells the two apart.
 */
export function clientGoneSignal(res: ServerResponse): AbortSignal {
  const controller = new AbortController()
  res.once('close', () => {
    if (!res.writableFinished) controller.abort(new Error('The client closed the connection'))
  })
  return controller.signal
}
