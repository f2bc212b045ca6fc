import { packageBuild } from '../../tsup.base.ts'

// The library (runCli, ScanAuthCliError) and the `scanauth` bin, which keeps its #! line.
export default packageBuild(['src/index.ts', 'src/bin.ts'])
