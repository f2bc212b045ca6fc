/**
 * `@scanauth/client` bundled for the demo page: one ESM file, `/client.js`, that `public/app.js`
 * imports. esbuild builds it from the client's TypeScript sources (the `@scanauth/source` condition,
 * as everything in this repository runs), for browsers: a Node built-in in the client fails the
 * bundle, which is the check that the client really is browser code.
 *
 * Both example servers bundle it in memory the first time the page asks (once per process, about a
 * tenth of a second), so `npm start` on a fresh clone, and every test that opens the page, serve the
 * client as its sources are now, with no build step to forget. `npm run build` writes the same
 * bundle to `examples/shared/dist/client.js` (`npm run build -w @scanauth/example-shared`), for
 * hosting the page's files elsewhere and as the build's check that it bundles.
 *
 * @module
 */
import { mkdir, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

/** Where `npm run build` writes the bundle. */
export const CLIENT_BUNDLE_FILE = fileURLToPath(new URL('../dist/client.js', import.meta.url))

const BANNER = '// @scanauth/client for the scanauth demo page: bundled from packages/client/src by examples/shared/src/client-bundle.ts (esbuild). Generated: do not edit.'

/** Bundles `@scanauth/client` for browsers; resolves with the JavaScript text. */
export async function bundleClient(): Promise<string> {
  const result = await build({
    stdin: {
      contents: "export * from '@scanauth/client'",
      resolveDir: fileURLToPath(new URL('.', import.meta.url)),
      sourcefile: 'client-entry.js',
      loader: 'js',
    },
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    // What the page's own scripts assume: evergreen browsers (top-level ESM, `??=`, private fields).
    target: ['es2022'],
    conditions: ['@scanauth/source'],
    banner: { js: BANNER },
    legalComments: 'inline',
    logLevel: 'silent',
  })
  const file = result.outputFiles[0]
  if (file === undefined) throw new Error('esbuild wrote no bundle of @scanauth/client')
  return file.text
}

let bundled: Promise<string> | undefined

/** The bundle for this process: made on the first call, shared by every server the process runs. A failure is not kept, so a later request tries again. */
export function clientBundle(): Promise<string> {
  bundled ??= bundleClient().catch((error: unknown) => {
    bundled = undefined
    throw error
  })
  return bundled
}

/** Writes the bundle to `file` (default {@link CLIENT_BUNDLE_FILE}): the build's step. */
export async function writeClientBundle(file = CLIENT_BUNDLE_FILE): Promise<void> {
  const text = await bundleClient()
  await mkdir(dirname(file), { recursive: true })
  await writeFile(file, text)
}
