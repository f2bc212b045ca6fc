// docs/openapi.json, the OpenAPI document of the HTTP routes: it is what `npm run openapi` generates
// from the route table and its zod schemas today (a stale file fails here), it describes every route
// of the table (packages/core/src/http/routes.ts) and the handler answers each one, and an outside validator
// (@seriousme/openapi-schema-validator, the OpenAPI 3.1 JSON Schema plus a check of every $ref) finds
// it valid, and finds documents broken in the usual ways invalid.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Validator } from '@seriousme/openapi-schema-validator'
import { describe, expect, it } from 'vitest'
import { createHttpHandler, createScanAuth, MemoryStore, openApiDocument, openApiJson } from '@scanauth/core'
import { RecordingQrProvider, TestNotifier, TestPaymentService, TestWebOAuth } from '@scanauth/testkit'
import { ROUTES } from '../packages/core/src/http/routes'
import { REPO_ROOT } from './support/markdown'

const FILE = join(REPO_ROOT, 'docs', 'openapi.json')

/** The validator's verdict on a document. */
async function verdict(document: unknown): Promise<{ valid: boolean; errors?: unknown }> {
  return new Validator().validate(document as Record<string, unknown>)
}

describe('docs/openapi.json', () => {
  it('is the document generated from the routes’ schemas now (else run `npm run openapi`)', () => {
    const onDisk = readFileSync(FILE, 'utf8')
    const fresh = openApiJson()
    // The parsed comparison names the part that differs; the text one catches formatting.
    expect(JSON.parse(onDisk), 'docs/openapi.json is stale: run `npm run openapi`').toEqual(JSON.parse(fresh))
    expect(onDisk, 'docs/openapi.json is stale: run `npm run openapi`').toBe(fresh)
  })

  it('is a valid OpenAPI 3.1 document with the JSON Schema 2020-12 dialect', async () => {
    const document = JSON.parse(readFileSync(FILE, 'utf8')) as Record<string, unknown>
    expect(document).toMatchObject({ openapi: '3.1.0', jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema' })
    const result = await verdict(document)
    expect(result.errors).toBeUndefined()
    expect(result.valid).toBe(true)
  })

  it('describes every route of the table, with the Bearer scheme where a session is required, and the handler answers each one', async () => {
    const document = openApiDocument() as {
      paths: Record<string, Record<string, { security?: unknown }>>
      components: { securitySchemes: Record<string, unknown> }
    }
    const documented = Object.entries(document.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`))
    expect(documented.sort()).toEqual(ROUTES.map((route) => `${route.method} ${route.path}`).sort())
    expect(document.components.securitySchemes).toEqual({ bearer: expect.objectContaining({ type: 'http', scheme: 'bearer' }) })
    // A route for anyone has no `security`; `optional-bearer` (a purchase by scene needs no session, one by session does) has both.
    const security = { none: undefined, bearer: [{ bearer: [] }], 'optional-bearer': [{}, { bearer: [] }] }
    // Every route is served: the confirm page with confirm: 'link', the phone pages with payments.phone,
    // the subscription redirect with reminders that offer one, the document by default.
    const auth = createScanAuth({
      store: new MemoryStore(),
      qr: new RecordingQrProvider(),
      confirm: 'link',
      confirmation: { url: 'https://app.example.test/auth/confirm', oauth: new TestWebOAuth() },
      payments: {
        provider: new TestPaymentService(Date.now),
        plans: [{ id: 'month', description: '30 days', amountFen: 1990, grant: { type: 'time', days: 30 } }],
        phone: { url: 'https://app.example.test/auth/m/', oauth: new TestWebOAuth() },
      },
      reminders: { leadDays: [3], notifier: new TestNotifier({ templateId: 'tpl', scene: 1 }), url: 'https://app.example.test/auth/m/' },
    })
    const handle = createHttpHandler(auth)
    for (const route of ROUTES) {
      const where = `${route.method} ${route.path}`
      expect(document.paths[route.path]?.[route.method.toLowerCase()]?.security, where).toEqual(security[route.auth])
      const answer = await handle({ method: route.method, path: `/auth${route.path}`, body: route.method === 'POST' ? '{}' : undefined })
      expect(answer, where).toBeDefined()
      expect(answer?.status, where).not.toBe(405)
    }
  })

  it('the validator refuses a broken document: a missing field, a dangling $ref, a wrong type, another version', async () => {
    // Loose on purpose: each case reaches into the document to break one thing.
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    type Loose = Record<string, any>
    const broken: Array<[string, (document: Loose) => void]> = [
      ['no info.version', (d) => delete d.info.version],
      ['a $ref to nothing', (d) => (d.paths['/status'].get.responses['200'].content['application/json'].schema = { $ref: '#/components/schemas/Nope' })],
      ['a response without a description', (d) => delete d.paths['/plans'].get.responses['200'].description],
      ['a parameter without `in`', (d) => delete d.paths['/status'].get.parameters[0].in],
      ['paths that do not start with a slash', (d) => (d.paths = { status: d.paths['/status'] })],
      ['no openapi version', (d) => delete d.openapi],
    ]
    for (const [what, breakIt] of broken) {
      const document = structuredClone(openApiDocument()) as Loose
      breakIt(document)
      expect((await verdict(document)).valid, what).toBe(false)
    }
  })
})
