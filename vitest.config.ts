// Root Vitest config. The list of projects lives in `vitest.workspace.ts` (kept as the one place that
// names them; Vitest 4 does not read that file on its own any more), imported here into `test.projects`.
import { defineConfig } from 'vitest/config'
import projects from './vitest.workspace.ts'

export default defineConfig({
  test: {
    projects,
  },
})
