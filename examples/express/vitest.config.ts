import { scanauthProject } from '../../vitest.shared.ts'

export default scanauthProject('example-express', { testTimeout: 60_000 })
