/**
 * A payment notification as a host received it, the handler it goes to, and the body limit of the
 * `notify_url` endpoints: one home for what `@scanauth/wechat-pay` takes and returns and what the
 * Express and Koa adapters hand it, so that an adapter need not depend on `@scanauth/wechat-pay`.
 *
 * @module
 */

/**
 * A payment notification as the host received it: its headers and its raw body. A payment service
 * signs the exact bytes it sends, so whatever verifies the notification must be given those bytes.
 */
export interface RawNotificationRequest {
  /** The request headers, names in any case, a repeated header as an array (Node's `IncomingHttpHeaders` fits). */
  headers: Readonly<Record<string, string | readonly string[] | undefined>>
  /** The raw body: the bytes, or the text exactly as received. Never a parsed and re-serialized object: that changes the signed bytes. */
  body: Uint8Array | string
}

/** What verifies and applies a raw notification, and the answer for the payment service. */
export type RawNotificationHandler = (request: RawNotificationRequest) => Promise<{
  /** The status to answer: 2xx stops the payment service's retries, anything else makes it send again. */
  status: number
  /** Headers to answer with. */
  headers?: Record<string, string>
  /** The body to answer with; empty or absent for a 204. */
  body?: string
}>

/** The largest notification a `notify_url` endpoint reads by default, in bytes: 64 KiB (real ones are about 1 KiB). */
export const DEFAULT_NOTIFY_MAX_BODY_BYTES = 64 * 1024
