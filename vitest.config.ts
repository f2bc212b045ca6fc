// Root Vitest config. The list of projects lives in `vitest.workspace.ts` (kept as the one place that
// names them; Vitest 4 does not read that file on its own any more), imported here into `test.projects`.
import { defineConfig } from 'vitest/config'
import projects from './vitest.workspace.ts'

export default defineConfig({
  test: {
    projects,
    // Redis and PostgreSQL for the tests: the ones at REDIS_URL / DATABASE_URL, else throwaway servers
    // started for the run (and a loud banner naming what could not be had); see test/services/.
    // Runs once per run (the root's global setup), before any project's tests.
    globalSetup: ['./test/services/global-setup.ts'],
  },
})
