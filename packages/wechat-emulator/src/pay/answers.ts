/**
 * What the emulated WeChat Pay API answers, before signing: a status and a JSON body (none for 204),
 * and WeChat's error body `{code, message, detail?}`.
 *
 * @module
 */

/** An answer of the API: HTTP status, and the JSON value of the body (undefined for no body). */
export interface PayAnswer {
  status: number
  body?: unknown
}

/** WeChat's error shape, e.g. `payError(400, 'PARAM_ERROR', '…', { field: '#/properties/amount/total', … })`. */
export function payError(status: number, code: string, message: string, detail?: Record<string, unknown>): PayAnswer {
  return { status, body: detail === undefined ? { code, message } : { code, message, detail } }
}

/**
 * A 400 `PARAM_ERROR` about one field of the body, in the shape WeChat's schema check uses:
 * `detail.field` is a JSON pointer into the schema, `detail.location` says where the field was.
 */
export function paramError(field: string, issue: string, value?: unknown, location: 'body' | 'query' | 'path' = 'body'): PayAnswer {
  const pointer = `#/properties/${field.replace(/\./g, '/properties/')}`
  const detail: Record<string, unknown> = { field: pointer, issue, location }
  if (value !== undefined) detail.value = value
  return payError(400, 'PARAM_ERROR', `${field}: ${issue}`, detail)
}

/** Whether an answer is one of WeChat's error bodies, and its code. */
export function errorCode(answer: PayAnswer): string | undefined {
  const body = answer.body as { code?: unknown } | undefined
  return answer.status >= 400 && typeof body?.code === 'string' ? body.code : undefined
}
