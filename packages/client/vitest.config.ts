import { scanauthProject } from '../../vitest.shared.ts'

export default scanauthProject('client')
