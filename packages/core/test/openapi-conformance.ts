// Checking actual answers of the routes against the OpenAPI document (`openApiDocument()`): the status
// is documented for the path and method, the headers it marks required are there, the content type is
// one it lists, and a JSON body validates against its schema. The schemas are checked with Ajv 8 (JSON
// Schema 2020-12) and ajv-formats, the ones @seriousme/openapi-schema-validator uses (the root
// `ajv` is eslint's Ajv 6, which knows no 2020-12), loaded from beside the validator.
import { createRequire } from 'node:module'
import { openApiDocument } from '@scanauth/core'

/** The little of Ajv these checks use. */
interface ValidateFunction {
  (data: unknown): boolean
  errors?: unknown[] | null
}
interface Ajv {
  addSchema(schema: object, key: string): Ajv
  compile(schema: object): ValidateFunction
  errorsText(errors?: unknown[] | null): string
}

const nearValidator = createRequire(createRequire(import.meta.url).resolve('@seriousme/openapi-schema-validator'))
const Ajv2020 = (nearValidator('ajv/dist/2020') as { default: new (options: object) => Ajv }).default
const addFormats = (nearValidator('ajv-formats') as { default: (ajv: Ajv) => void }).default

type Json = Record<string, unknown>

/** An answer as the checks see it: header names in lower case, the JSON body parsed (absent when there is none). */
export interface CheckedAnswer {
  status: number
  headers: Record<string, string>
  body?: unknown
}

/** The checks, on one document. */
export interface Conformance {
  /** Problems of an answer to `method path` (`path` relative to the base, e.g. `/status`); empty when it conforms. */
  check(method: string, path: string, answer: CheckedAnswer): string[]
  /** Problems of a value against a schema of the document, by JSON pointer (`#/components/schemas/Status`). */
  validate(pointer: string, value: unknown): string[]
}

/** JSON pointer escaping of one key. */
const escape = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1')

/** The checks for `document` (default: the one the handler serves). */
export function conformance(document: Json = structuredClone(openApiDocument()) as Json): Conformance {
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  addFormats(ajv)
  ajv.addSchema(document, 'openapi.json')
  const compiled = new Map<string, ValidateFunction>()

  const validate = (pointer: string, value: unknown): string[] => {
    let run = compiled.get(pointer)
    if (run === undefined) {
      run = ajv.compile({ $ref: `openapi.json${pointer}` })
      compiled.set(pointer, run)
    }
    return run(value) ? [] : [`${pointer}: ${ajv.errorsText(run.errors)} in ${JSON.stringify(value)}`]
  }

  const paths = document.paths as Record<string, Record<string, Json>>
  const headerComponents = (document.components as { headers: Record<string, Json> }).headers

  const check = (method: string, path: string, answer: CheckedAnswer): string[] => {
    const where = `${method} ${path} ${answer.status}`
    const item = paths[path]
    if (item === undefined) return [`${where}: the path is not in the document`]
    const verb = method.toLowerCase() === 'head' ? 'get' : method.toLowerCase()
    const operation = item[verb] as { responses: Record<string, Json> } | undefined
    if (operation === undefined) {
      // A method the document does not list for the path: 405, with `allow` naming exactly the documented ones.
      const documented = Object.keys(item).map((m) => m.toUpperCase()).sort()
      const allowed = (answer.headers.allow ?? '').split(',').map((m) => m.trim()).filter(Boolean).sort()
      const problems = answer.status === 405 ? [] : [`${where}: a method the document does not list must answer 405`]
      if (allowed.join() !== documented.join()) problems.push(`${where}: allow is "${answer.headers.allow}", the document lists ${documented.join(', ')}`)
      return problems
    }
    const response = operation.responses[String(answer.status)]
    if (response === undefined) return [`${where}: the status is not documented for this operation`]
    const problems: string[] = []
    for (const [name, declared] of Object.entries((response.headers ?? {}) as Record<string, Json>)) {
      const header = typeof declared.$ref === 'string' ? (headerComponents[(declared.$ref as string).split('/').pop() as string] as Json) : declared
      const value = answer.headers[name.toLowerCase()]
      if (value === undefined) {
        if (header.required === true) problems.push(`${where}: the required header ${name} is missing`)
        continue
      }
      const schema = header.schema as Json | undefined
      if (schema?.type === 'integer' && !/^\d+$/.test(value)) problems.push(`${where}: ${name} "${value}" is not an integer`)
      if (schema?.const !== undefined && value !== schema.const) problems.push(`${where}: ${name} "${value}" is not "${String(schema.const)}"`)
    }
    const content = response.content as Record<string, Json> | undefined
    const type = answer.headers['content-type']?.split(';')[0]?.trim()
    if (content === undefined) {
      if (answer.body !== undefined) problems.push(`${where}: the document says no body, the answer has one`)
      return problems
    }
    if (type === undefined || content[type] === undefined) {
      problems.push(`${where}: content type ${String(type)} is not one of ${Object.keys(content).join(', ')}`)
      return problems
    }
    if (type === 'application/json' && answer.body !== undefined && method.toUpperCase() !== 'HEAD') {
      const pointer = `#/paths/${escape(path)}/${verb}/responses/${answer.status}/content/${escape(type)}/schema`
      problems.push(...validate(pointer, answer.body).map((problem) => `${where}: ${problem}`))
    }
    return problems
  }

  return { check, validate }
}
