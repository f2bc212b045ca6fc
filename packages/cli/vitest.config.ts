import { scanauthProject } from '../../vitest.shared.ts'

// The tests run the `scanauth` bin as child processes (built once by the global setup) against real
// stores that a server in the test process uses at the same time; each run starts a Node process,
// hence the longer timeout.
export default scanauthProject('cli', { testTimeout: 120_000, globalSetup: ['test/support/build-bin.ts'] })
