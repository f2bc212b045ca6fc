/**
 * `fetch` with the body parsed as JSON, the way the route tests read every answer.
 *
 * @module
 */

/** An answer read by {@link fetchJson}. */
export interface JsonAnswer {
  /** The HTTP status. */
  status: number
  /** The response headers. */
  headers: Headers
  /**
   * The body parsed as JSON; the text itself when it is not JSON; `undefined` when empty. Typed
   * `any` because tests read it field by field.
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- test bodies are read field by field
  body: any
}

/** `fetch(url, init)`, then the whole body, parsed as JSON when it is JSON. */
export async function fetchJson(url: string, init: RequestInit = {}): Promise<JsonAnswer> {
  const res = await fetch(url, init)
  const text = await res.text()
  let body: unknown = text
  try {
    body = text === '' ? undefined : JSON.parse(text)
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, headers: res.headers, body }
}

/** A `POST` of `body` as JSON (`content-type: application/json`, plus `headers`), read by {@link fetchJson}. */
export function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<JsonAnswer> {
  return fetchJson(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
}
