/**
 * The wire schemas (wire-schemas.ts) as the OpenAPI document shows them, with `z.toJSONSchema`:
 * `components.schemas`, the `$ref`s to them, and the parameters of a route (openapi.ts).
 *
 * @module
 */
import { z } from 'zod'
import { consumeAnswer, statusAnswer, wireRegistry } from './wire-schemas'

/** A JSON object of the document. */
export type Json = { [key: string]: unknown }

const SCHEMAS = '#/components/schemas/'

/** A `$ref` to the component of a wire schema (one with an `id`). */
export function ref(schema: z.ZodType): Json {
  const id = wireRegistry.get(schema)?.id
  if (id === undefined) throw new Error('openapi: a schema the document refers to has no id in wireRegistry')
  return { $ref: `${SCHEMAS}${id}` }
}

/** A schema without an id as JSON Schema, in place (a query parameter's, a header's). */
function inline(schema: z.ZodType): Json {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input', metadata: wireRegistry }) as Json
  return json
}

/**
 * `components.schemas`: every wire schema with an id, the request bodies in their input form (a
 * default makes a field optional), with the `discriminator` of each union whose every member is a
 * component (for client generators; JSON Schema validation ignores it).
 */
export function componentSchemas(): Record<string, Json> {
  const { schemas } = z.toJSONSchema(wireRegistry, { target: 'draft-2020-12', io: 'input', metadata: wireRegistry, uri: (id) => `${SCHEMAS}${id}` })
  const components: Record<string, Json> = {}
  for (const [id, schema] of Object.entries(schemas)) {
    const { $schema: _dialect, $id: _id, ...json } = schema as Json
    components[id] = json
  }
  for (const union of DISCRIMINATED) {
    const id = wireRegistry.get(union)?.id
    const discriminator = discriminatorOf(union)
    if (id !== undefined && discriminator !== undefined) components[id] = { ...components[id], discriminator }
  }
  return components
}

/** The unions of the answers that carry a `discriminator`. */
const DISCRIMINATED = [statusAnswer, consumeAnswer]

/** `{propertyName, mapping}` of a discriminated union whose members are all components; undefined otherwise. */
function discriminatorOf(union: z.ZodDiscriminatedUnion): Json | undefined {
  const propertyName = union.def.discriminator
  const mapping: Record<string, string> = {}
  for (const option of union.options) {
    const id = wireRegistry.get(option as z.ZodType)?.id
    const key = (option as z.ZodObject).shape[propertyName]
    if (id === undefined || key === undefined) return undefined
    const values = key instanceof z.ZodLiteral ? [...key.values] : key instanceof z.ZodEnum ? key.options : []
    for (const value of values) mapping[String(value)] = `${SCHEMAS}${id}`
  }
  return { propertyName, mapping }
}

/** The query parameters of a route, from the schema it parses them with. */
export function queryParameters(schema: z.ZodObject): Json[] {
  const json = inline(schema) as { properties: Record<string, Json>; required?: string[] }
  return Object.entries(json.properties).map(([name, property]) => {
    const { description, ...rest } = property
    return { name, in: 'query', required: json.required?.includes(name) ?? false, description, schema: rest }
  })
}

/** A header parameter. */
export function headerParameter(name: string, schema: z.ZodType): Json {
  const { description, ...rest } = inline(schema)
  return { name, in: 'header', required: false, description, schema: rest }
}
