/**
 * The repository side of the consumer test: which packages are public, whether their `dist/` is
 * current, and packing them into tarballs the way `npm publish` would.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { REPO_ROOT } from '../support/markdown'
import { run, succeeded } from './run'

/** A public package of the workspace. */
export interface WorkspacePackage {
  /** `@scanauth/core` */
  name: string
  /** Its folder relative to the repository root, `packages/core`. */
  dir: string
  /** Its package.json as it is in the repository (and so in the tarball). */
  manifest: PackageManifest
}

/** The package.json fields the test reads. */
export interface PackageManifest {
  name: string
  private?: boolean
  main?: string
  module?: string
  types?: string
  exports?: Record<string, unknown>
  dependencies?: Record<string, string>
  peerDependencies?: Record<string, string>
}

/** One packed tarball, from `npm pack --json`. */
export interface PackedTarball {
  name: string
  /** Absolute path of the `.tgz`. */
  file: string
  /** Bytes of the tarball and of its unpacked contents. */
  size: number
  unpackedSize: number
  /** Paths inside the package (`dist/index.js`, `README.md`, ...). */
  files: string[]
}

/** Every folder under `packages/` with a package.json that is not private, sorted by name. */
export function publicPackages(): WorkspacePackage[] {
  const found: WorkspacePackage[] = []
  for (const entry of readdirSync(join(REPO_ROOT, 'packages'), { withFileTypes: true })) {
    if (!entry.isDirectory()) continue
    const dir = `packages/${entry.name}`
    const manifestPath = join(REPO_ROOT, dir, 'package.json')
    if (!statSync(manifestPath, { throwIfNoEntry: false })?.isFile()) continue
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as PackageManifest
    if (manifest.private !== true) found.push({ name: manifest.name, dir, manifest })
  }
  return found.sort((a, b) => a.name.localeCompare(b.name))
}

/** Modification times (ms) of every file under `path` (a file or a folder). */
function mtimes(path: string): number[] {
  const stat = statSync(path, { throwIfNoEntry: false })
  if (stat === undefined) return []
  if (!stat.isDirectory()) return [stat.mtimeMs]
  return readdirSync(path).flatMap((name) => mtimes(join(path, name)))
}

/**
 * True when the package's `dist/` exists and every file in it is newer than everything its build
 * reads: its sources, its package.json and tsup config, and the shared `tsup.base.ts`.
 */
export function distIsCurrent(pkg: WorkspacePackage): boolean {
  const root = join(REPO_ROOT, pkg.dir)
  const built = mtimes(join(root, 'dist'))
  if (built.length === 0) return false
  const inputs = [join(root, 'src'), join(root, 'package.json'), join(root, 'tsup.config.ts'), join(REPO_ROOT, 'tsup.base.ts')].flatMap(mtimes)
  return Math.min(...built) >= Math.max(...inputs)
}

/** `npm run build` at the repository root (every workspace's tsup). */
export async function buildAll(): Promise<void> {
  succeeded(await run('npm', ['run', 'build'], { cwd: REPO_ROOT, timeoutMs: 5 * 60_000 }))
}

/** `npm pack` of the given packages into `destination`, in one npm run. */
export async function packAll(packages: WorkspacePackage[], destination: string): Promise<PackedTarball[]> {
  const workspaces = packages.flatMap((pkg) => ['--workspace', pkg.dir])
  const stdout = succeeded(await run('npm', ['pack', '--json', '--pack-destination', destination, ...workspaces], { cwd: REPO_ROOT, timeoutMs: 3 * 60_000 }))
  const packed = JSON.parse(stdout) as { name: string; filename: string; size: number; unpackedSize: number; files: { path: string }[] }[]
  return packed.map((p) => ({ name: p.name, file: join(destination, p.filename), size: p.size, unpackedSize: p.unpackedSize, files: p.files.map((f) => f.path) }))
}

/**
 * The files a consumer can reach through `main`, `module`, `types` and every `exports` target,
 * without leading `./`. The `@scanauth/source` condition is left out on purpose: it points at the
 * TypeScript sources for the repository's own tools and tests, which are not published.
 */
export function entryFiles(manifest: PackageManifest): string[] {
  const targets = new Set<string>()
  const visit = (value: unknown, condition: string): void => {
    if (condition === '@scanauth/source') return
    if (typeof value === 'string') targets.add(value.replace(/^\.\//, ''))
    else if (value !== null && typeof value === 'object') for (const [key, inner] of Object.entries(value)) visit(inner, key)
  }
  for (const field of [manifest.main, manifest.module, manifest.types]) visit(field, '')
  visit(manifest.exports, '')
  return [...targets].sort()
}

/** Whether the package's `exports["."]` offers a `require` condition (a CommonJS entry). */
export function offersRequire(manifest: PackageManifest): boolean {
  const root = manifest.exports?.['.']
  return root !== null && typeof root === 'object' && 'require' in root
}
