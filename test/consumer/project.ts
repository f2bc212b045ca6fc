/**
 * The fresh consumer project: a folder outside the repository (no workspace links, no repository
 * node_modules above it), the fixture sources copied in, a package.json that depends on the packed
 * tarballs and one `npm install` (TypeScript is run over it by `tsc.ts`).
 */
import { cpSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { run, succeeded } from './run'
import { compilerDependencies } from './tsc'
import type { PackedTarball, WorkspacePackage } from './workspace'

/** The fixture files every consumer starts from. */
const FIXTURE = join(import.meta.dirname, 'fixture')

/** What the consumer installs besides the tarballs. */
const CONSUMER_DEPENDENCIES = { express: '^5', koa: '^3', ioredis: '^5' }
/** Its tools: both TypeScript compilers (see tsc.ts), Node's types, and vitest (the peer `@scanauth/testkit` asks for). */
const CONSUMER_DEV_DEPENDENCIES = { ...compilerDependencies(), '@types/node': '^20', vitest: '^4.1' }

/** The frameworks' type packages, each added unless a scanauth package already depends on it. */
const FRAMEWORK_TYPES: Record<string, string> = { '@types/express': '^5', '@types/koa': '^3' }

/** The consumer's package.json: the tarballs by path, the frameworks, the tools. */
export function consumerManifest(tarballs: PackedTarball[], packages: WorkspacePackage[]): object {
  const dependencies: Record<string, string> = { ...CONSUMER_DEPENDENCIES }
  for (const tarball of tarballs) dependencies[tarball.name] = `file:${tarball.file}`
  const devDependencies: Record<string, string> = { ...CONSUMER_DEV_DEPENDENCIES }
  const brought = new Set(packages.flatMap((p) => Object.keys({ ...p.manifest.dependencies, ...p.manifest.peerDependencies })))
  for (const [types, range] of Object.entries(FRAMEWORK_TYPES)) if (!brought.has(types)) devDependencies[types] = range
  return {
    name: 'scanauth-consumer',
    version: '0.0.0',
    private: true,
    type: 'module',
    dependencies,
    devDependencies,
    // npm 11 runs only the install scripts a project allows; better-sqlite3 compiles its binding.
    allowScripts: { 'better-sqlite3': true },
  }
}

/** Creates the project in `dir` with the fixture and the generated sources (name → text). */
export function writeConsumer(dir: string, manifest: object, generated: Record<string, string>): void {
  mkdirSync(dir, { recursive: true })
  cpSync(FIXTURE, dir, { recursive: true })
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`)
  for (const [name, text] of Object.entries(generated)) writeFileSync(join(dir, 'src', name), text)
}

/**
 * `npm install` in the consumer. Its install scripts run: better-sqlite3 compiles from source (about
 * a minute), and the SQLite check then opens a real database with it.
 */
export async function installConsumer(dir: string): Promise<void> {
  succeeded(await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline'], { cwd: dir, timeoutMs: 8 * 60_000 }))
}
