// `npm run openapi`: writes docs/openapi.json, the OpenAPI 3.1 document of the HTTP routes, exactly as
// `GET {base}/openapi.json` serves it. It is generated from the route table and the zod schemas the
// routes parse with (packages/core/src/http/routes.ts, wire-schemas.ts, openapi.ts); test/openapi.test.ts
// fails while the file is stale.
//
// `npm run openapi -- --check` writes nothing: it exits 1 when the file differs from the generated text.
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import process from 'node:process'
import { openApiJson } from '@scanauth/core'

const target = fileURLToPath(new URL('../docs/openapi.json', import.meta.url))
const text = openApiJson()

if (process.argv.includes('--check')) {
  let current: string | undefined
  try {
    current = readFileSync(target, 'utf8')
  } catch {
    current = undefined
  }
  if (current !== text) {
    console.error('docs/openapi.json is stale: run `npm run openapi`')
    process.exit(1)
  }
  console.log('docs/openapi.json is current')
} else {
  writeFileSync(target, text)
  console.log(`wrote docs/openapi.json (${Buffer.byteLength(text)} bytes)`)
}
