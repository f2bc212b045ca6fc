// The Vitest recipe of docs/getting-started.md ("5. Test your app over HTTP") runs here as the guide
// writes it: its ```ts block is copied into test-output/ (not committed) and imported, so its
// beforeAll, afterAll and `it` are this file's. The repository's doc check only type-checks the
// guide's blocks; this one must also pass: an app on port 0, the emulator scanning by scene_str,
// 50 scenes with rateLimits: false.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const GUIDE = fileURLToPath(new URL('../../../docs/getting-started.md', import.meta.url))
const OUTPUT = fileURLToPath(new URL('../test-output/', import.meta.url))
const HEADING = '## 5. Test your app over HTTP'

const guide = readFileSync(GUIDE, 'utf8')
const at = guide.indexOf(HEADING)
const block = at < 0 ? undefined : /```ts\n([\s\S]*?)```/.exec(guide.slice(at))?.[1]
if (block === undefined) throw new Error(`docs/getting-started.md: no \`\`\`ts block under "${HEADING}"`)

mkdirSync(OUTPUT, { recursive: true })
const recipe = `${OUTPUT}getting-started-recipe.ts`
writeFileSync(recipe, `// Copied from docs/getting-started.md by test/getting-started.test.ts: edit the guide, not this.\n${block}`)
await import(/* @vite-ignore */ recipe)
