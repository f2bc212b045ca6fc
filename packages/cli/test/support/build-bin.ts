/**
 * Vitest global setup: builds the `scanauth` bin once for the whole run, as tsup builds it (esbuild,
 * ESM, Node 20), with the workspace packages bundled from their TypeScript sources (the
 * `@scanauth/source` condition) and every other dependency left to Node, so that the tests run the
 * built command line without a build of the other packages first. Each run starts a plain `node`,
 * about twice as fast as `tsx src/bin.ts`.
 */
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { build } from 'esbuild'

/** The folder of the built bin (ignored by git and eslint). */
export const BUILT_DIR = join(import.meta.dirname, '..', '..', 'test-output')
/** The built bin. */
export const BUILT_BIN = join(BUILT_DIR, 'scanauth.mjs')

export default async function buildBin(): Promise<void> {
  rmSync(BUILT_DIR, { recursive: true, force: true })
  await build({
    entryPoints: [join(import.meta.dirname, '..', '..', 'src', 'bin.ts')],
    outfile: BUILT_BIN,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    conditions: ['@scanauth/source'],
    logLevel: 'warning',
    plugins: [
      {
        name: 'dependencies-stay-external',
        setup(esbuild) {
          // Bare imports other than our own packages (zod, better-sqlite3, ioredis, pg) load from node_modules.
          esbuild.onResolve({ filter: /^[^./]/ }, (args) => (args.path.startsWith('@scanauth/') ? undefined : { path: args.path, external: true }))
        },
      },
    ],
  })
}
