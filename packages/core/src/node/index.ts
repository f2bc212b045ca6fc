/**
 * `@scanauth/core/node`: the door a Node framework adapter imports (`@scanauth/express`,
 * `@scanauth/koa`, or an adapter of your own over `node:http`). It reads request bodies and query
 * values off Node's request, ties a long poll to the client's connection, and writes the response
 * head and the event stream onto Node's response with the headers the routes chose; and it shares
 * the process's one load of `@opentelemetry/api` with the other Node packages (`@scanauth/wechat-pay`).
 * These name Node's types; the main door `@scanauth/core` names none.
 *
 * @example
 * ```ts
 * import { createServer } from 'node:http'
 * import { createHttpHandler, responseText, type ScanAuth } from '@scanauth/core'
 * import { readRawBody, writeResponseHead, writeEventStream } from '@scanauth/core/node'
 *
 * declare const auth: ScanAuth
 * const handle = createHttpHandler(auth)
 * createServer(async (req, res) => {
 *   const answer = await handle({ method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, body: await readRawBody(req, 16_384) })
 *   if (answer === undefined) return void res.writeHead(404).end()
 *   writeResponseHead(res, answer)
 *   if (answer.events !== undefined) return void (await writeEventStream(res, answer.events))
 *   res.end(answer.text ?? JSON.stringify(answer.body))
 * })
 * ```
 *
 * @packageDocumentation
 */
export { readRawBody, firstQueryValues } from './body'
export { mayWait, clientGoneSignal } from './wait'
export { writeEventStream, writeResponseHead } from './events'
export { sharedOpenTelemetryApi, type SharedOpenTelemetryApi } from '../telemetry/load'
