#!/usr/bin/env node
// The `scanauth` command as npm links it. npm links a package's bins when it installs it, and only to
// files that exist then; in a clone of the repository `npm ci` runs before anything is built, so the
// bin is this committed file, which runs the built command (dist/bin.js, from src/bin.ts) or says
// how to build it.
import { existsSync } from 'node:fs'
import { URL } from 'node:url'

const built = new URL('../dist/bin.js', import.meta.url)
if (existsSync(built)) {
  await import(built.href)
} else {
  process.stderr.write('scanauth: @scanauth/cli is not built yet (no dist/bin.js); run `npm run build` at the repository root first\n')
  process.exitCode = 1
}
