// The one list of test projects. Vitest 4 no longer reads a `vitest.workspace.ts` by itself (the
// `workspace` option was removed in 4.0 in favour of `test.projects`), so `vitest.config.ts` imports
// this array into `test.projects`. Each entry is a package's own `vitest.config.ts` (`defineProject`).
export default [
  'packages/*/vitest.config.ts',
  'examples/*/vitest.config.ts',
  'test/vitest.config.ts', // repository-wide tests (project `repo`): docs, packaging
]
