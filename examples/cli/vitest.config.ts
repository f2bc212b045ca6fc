import { scanauthProject } from '../../vitest.shared.ts'

export default scanauthProject('example-cli', { testTimeout: 60_000 })
