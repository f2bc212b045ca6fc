// The repository-wide test project `repo`: tests of the repository as a whole (the docs' TypeScript
// snippets, the citations of docs/behaviour.md, packaging) rather than of one package.
import { scanauthProject } from '../vitest.shared.ts'

export default scanauthProject('repo', {
  // This file's folder is the project root: only the tests directly in test/, not fixtures below it.
  include: ['*.test.ts'],
  // Type-checking every snippet against the packages' sources takes a few seconds on a cold cache.
  testTimeout: 120_000,
  hookTimeout: 120_000,
})
