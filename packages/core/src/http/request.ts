/**
 * Reading the parts of a request the routes need: query values, a JSON body, a Bearer token.
 * Anything malformed becomes `ScanAuthError` `invalid_request` (400).
 */
import type { z } from 'zod'
import { ScanAuthError } from '../errors'
import { parseInput } from '../service/validation'
import type { HttpRequest } from './types'

/** The first value of a query parameter, from the request's query object and/or its path. */
export function queryValue(request: HttpRequest, name: string): string | undefined {
  const q = request.query
  let value: unknown
  if (q instanceof URLSearchParams) value = q.get(name)
  else if (q !== undefined) value = q[name]
  if (value === undefined || value === null) {
    const at = request.path.indexOf('?')
    if (at >= 0) value = new URLSearchParams(request.path.slice(at + 1)).get(name)
  }
  if (Array.isArray(value)) value = value[0]
  return typeof value === 'string' ? value : undefined
}

/**
 * A reader of the query parameters `schema` names (each its first value, as {@link queryValue} reads
 * it), parsed with the schema: `invalid_request` (400) with the schema's message when they do not fit.
 */
export function queryParser<T extends z.ZodObject>(schema: T): (request: HttpRequest) => z.output<T> {
  const names = Object.keys(schema.shape)
  return (request) => {
    const values: Record<string, string | undefined> = {}
    for (const name of names) values[name] = queryValue(request, name)
    return parseInput(schema, values) as z.output<T>
  }
}

/** A header's value (first one when repeated), by case-insensitive name. */
export function headerValue(request: HttpRequest, name: string): string | undefined {
  const headers = request.headers ?? {}
  for (const key of Object.keys(headers)) {
    if (key.toLowerCase() === name) {
      const v = headers[key]
      return Array.isArray(v) ? v[0] : v
    }
  }
  return undefined
}

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
export function bearerToken(request: HttpRequest): string | undefined {
  return bearerOf(headerValue(request, 'authorization'))
}

/** The token of an `Authorization: Bearer <token>` header; `unauthorized` (401) without one. */
export function requireBearer(request: HttpRequest): string {
  const token = bearerToken(request)
  if (token === undefined) throw new ScanAuthError('unauthorized', 'Authorization: Bearer <session token> is required')
  return token
}

/**
 * The poll secret a device presents (B-secret-2): the `X-Scanauth-Poll-Secret` header only. A query
 * parameter would land in access logs beside `scene=`, the very leak the secret closes (B-secret-3).
 */
export function pollSecretOf(request: HttpRequest): string | undefined {
  return headerValue(request, 'x-scanauth-poll-secret')
}

/** The token of an `Authorization` header's value `Bearer <token>` (scheme in any case), or undefined. */
export function bearerOf(authorization: string | undefined): string | undefined {
  const match = /^Bearer[ \t]+([^ \t]+)[ \t]*$/i.exec(authorization ?? '')
  return match?.[1]
}

// TextDecoder rather than Buffer: this module also runs under the Fetch handler on Bun and Deno.
// `ignoreBOM` keeps a leading BOM in the text (as Buffer's decoding does), so JSON.parse refuses it.
const UTF8 = new TextDecoder('utf-8', { ignoreBOM: true })

/** Whether a string takes more than `maxBytes` bytes in UTF-8. */
function longerThan(text: string, maxBytes: number): boolean {
  // Every UTF-16 unit is at least one UTF-8 byte: a string with more units is too long without encoding it.
  return text.length > maxBytes || new TextEncoder().encode(text).byteLength > maxBytes
}

/** `application/json` or `application/<anything>+json`, with any parameters (RFC 6839). */
const JSON_MEDIA_TYPE = /^application\/(?:[\w.-]+\+)?json[ \t]*(?:;|$)/i

/** Whether a request carries a body: raw bytes or text that is not empty, or anything a body parser made. */
function hasBody(body: unknown): boolean {
  if (body === undefined || body === null) return false
  if (body instanceof Uint8Array) return body.byteLength > 0
  if (typeof body === 'string') return body.trim() !== ''
  // A parser's empty object is what it makes of no body at all (Koa's bodyparser does).
  return typeof body !== 'object' || Object.keys(body).length > 0
}

/**
 * Whether a request's body may be read as JSON (B-wire-6): its content type says JSON. Without a
 * content type, raw bytes (what a server reads off the socket) are refused, as a browser sends a
 * typeless Blob; text or an object passes, as only code calling the handler gives those without one.
 */
function isJsonBody(request: HttpRequest): boolean {
  const type = headerValue(request, 'content-type')
  if (type !== undefined) return JSON_MEDIA_TYPE.test(type)
  return !(request.body instanceof Uint8Array)
}

/**
 * The JSON object in the body. Raw bodies are decoded (UTF-8) and parsed; an empty body is `{}`;
 * an object already parsed by a body parser is taken as is. A body whose content type is not JSON
 * is `unsupported_media_type` (415), whatever parsed it (B-wire-6): a browser sends `text/plain`
 * and forms across sites without asking, `application/json` only after a CORS preflight.
 */
export function jsonObjectBody(request: HttpRequest, maxBytes: number): Record<string, unknown> {
  let body = request.body
  if (hasBody(body) && !isJsonBody(request)) {
    throw new ScanAuthError('unsupported_media_type', 'The request body must be JSON, sent with Content-Type: application/json')
  }
  if (body instanceof Uint8Array) {
    if (body.byteLength > maxBytes) throw new ScanAuthError('invalid_request', 'Request body is too large')
    body = UTF8.decode(body)
  }
  if (body === undefined || body === null || (typeof body === 'string' && body.trim() === '')) return {}
  if (typeof body === 'string') {
    if (longerThan(body, maxBytes)) throw new ScanAuthError('invalid_request', 'Request body is too large')
    try {
      body = JSON.parse(body)
    } catch {
      throw new ScanAuthError('invalid_request', 'Request body is not valid JSON')
    }
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ScanAuthError('invalid_request', 'Request body must be a JSON object')
  }
  return body as Record<string, unknown>
}
