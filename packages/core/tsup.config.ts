import { packageBuild } from '../../tsup.base.ts'

// Three doors (package.json `exports`): the app's, the store author's, Node adapters'. Split chunks,
// in CommonJS too, so the three share one copy of what they have in common (one `ScanAuthError`
// class, whichever door an error comes through).
export default packageBuild({ index: 'src/index.ts', store: 'src/store/index.ts', node: 'src/node/index.ts' }, { splitting: true })
