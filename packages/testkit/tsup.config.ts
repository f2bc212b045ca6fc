import { packageBuild } from '../../tsup.base.ts'

// ESM only: the suites import vitest, whose CommonJS entry refuses to load, so a CommonJS build of
// the testkit could never run. Node 20.19 can still require() this ESM build.
export default packageBuild(['src/index.ts'], { format: ['esm'] })
