/**
 * The build step of the demo page (`npm run build`): writes `@scanauth/client` bundled for browsers
 * to `examples/shared/dist/client.js` (see `client-bundle.ts`; the servers bundle it themselves too).
 */
import { relative } from 'node:path'
import { CLIENT_BUNDLE_FILE, writeClientBundle } from './client-bundle'

await writeClientBundle()
console.log(`wrote ${relative(process.cwd(), CLIENT_BUNDLE_FILE)}`)
