import { scanauthProject } from '../../vitest.shared.ts'

export default scanauthProject('example-koa', { testTimeout: 60_000 })
