/**
 * What the HTTP route suites ask of a framework adapter's test host: serve an app with the scanauth
 * routes, the way people write one with the framework. One file that every route suite imports, so
 * that no suite imports another.
 *
 * @module
 */
import type { ScanAuth } from '@scanauth/core'

/** How the suite asks a host for an app. */
export interface HttpHostOptions {
  /**
   * Whether the app has its framework's usual body parser in front of the scanauth routes (for
   * Express `express.json()`, for Koa `@koa/bodyparser`). Default true. A framework without one
   * ignores it.
   */
  bodyParser?: boolean
  /** Pass it to the adapter's `onError` option: it must receive every unexpected error behind a 500. */
  onError?: (error: unknown) => void
  /** Pass it to the adapter's `heartbeatMs` option (time between an event stream's heartbeat comments). */
  heartbeatMs?: number
}

/**
 * Serves, until the test ends, an app the way people write one with the framework: its usual body
 * parser first (none when `options.bodyParser` is false), the scanauth routes of `auth` at `/auth`
 * given the client's address as the framework knows it (Express `req.ip`, Koa `ctx.ip`, the Fetch
 * handler's `clientAddress` option from the connection: the purchase limits per address need it),
 * then routes of the app's own: `POST /auth/login` answers `{ own: 'login', got: <the parsed JSON
 * body, or null> }`, `GET /auth/profile` answers `{ own: 'profile' }` and `GET /health` the text
 * `ok`; anything else is the framework's 404. Resolves with the base URL (no trailing slash).
 */
export type HttpRoutesHost = (auth: ScanAuth, options: HttpHostOptions) => Promise<string>
