// Settings every package's `vitest.config.ts` shares: resolve workspace packages to their TypeScript
// sources (the `@scanauth/source` export condition), so tests never need a build first.
import { defineProject, type UserWorkspaceConfig } from 'vitest/config'

// Vite's own server-side defaults after ours. (Listing `import` here would be passed to test workers
// as a Node `--conditions` flag and make require() of CommonJS dependencies pick ESM builds.)
const conditions = ['@scanauth/source', 'module', 'node', 'development|production']

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
      ...test,
    },
  })
}
