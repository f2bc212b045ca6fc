// Settings every package's `vitest.config.ts` shares: resolve workspace packages to their TypeScript
// sources (the `@scanauth/source` export condition), so tests never need a build first.
import { fileURLToPath } from 'node:url'
import { defineProject, type UserWorkspaceConfig } from 'vitest/config'

// Vite's own server-side defaults after ours. (Listing `import` here would be passed to test workers
// as a Node `--conditions` flag and make require() of CommonJS dependencies pick ESM builds.)
const conditions = ['@scanauth/source', 'module', 'node', 'development|production']

// Vitest's runner, skipping (with the reason) the tests whose Redis or PostgreSQL the test services'
// global setup could not provide, instead of failing them with ECONNREFUSED (test/services/).
const runner = fileURLToPath(new URL('./test/services/runner.ts', import.meta.url))

/** Defines one package's test project with the shared resolution settings. */
export function scanauthProject(name: string, test: NonNullable<UserWorkspaceConfig['test']> = {}) {
  return defineProject({
    resolve: { conditions },
    ssr: { resolve: { conditions, externalConditions: ['@scanauth/source'] } },
    test: {
      name,
      include: ['test/**/*.test.ts'],
      testTimeout: 20_000,
      hookTimeout: 30_000,
      runner,
      ...test,
    },
  })
}
