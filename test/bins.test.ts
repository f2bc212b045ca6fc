/**
 * The commands the workspace packages install (`bin` in their package.json), as a clone of the
 * repository gets them: `npm ci` links each bin into node_modules/.bin when it installs the
 * workspace, and only to a file that exists at that moment, which in a clone is a committed one
 * (dist/ is built later, and ignored by git). So each bin must be a file git keeps, start with
 * `#!/usr/bin/env node`, be executable and be published (`files`). Then `npx scanauth …` at the
 * repository root runs the workspace's command instead of looking for a package of that name on the
 * registry. The launcher of `@scanauth/cli` is run from a copy: with no build it says how to make
 * one, with a build it runs it with the arguments as given.
 */
import { spawnSync } from 'node:child_process'
import { accessSync, constants, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'

const root = join(import.meta.dirname, '..')

/** Every workspace package (packages/*, examples/*) that declares bins, with its bins by name. */
function packagesWithBins(): { dir: string; name: string; files: string[]; bins: Record<string, string> }[] {
  return ['packages', 'examples'].flatMap((folder) =>
    readdirSync(join(root, folder), { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && existsSync(join(root, folder, entry.name, 'package.json')))
      .map((entry) => {
        const dir = join(root, folder, entry.name)
        const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name: string; bin?: string | Record<string, string>; files?: string[] }
        const bins = typeof pkg.bin === 'string' ? { [pkg.name.replace(/^@[^/]+\//, '')]: pkg.bin } : (pkg.bin ?? {})
        return { dir, name: pkg.name, files: pkg.files ?? [], bins }
      })
      .filter((p) => Object.keys(p.bins).length > 0),
  )
}

/** Whether git ignores `path` (then a clone does not have it when `npm ci` links the bins). */
function gitIgnores(path: string): boolean {
  const result = spawnSync('git', ['check-ignore', '--quiet', '--no-index', relative(root, path)], { cwd: root })
  if (result.status !== 0 && result.status !== 1) throw new Error(`git check-ignore failed: ${String(result.stderr)}`)
  return result.status === 0
}

const withBins = packagesWithBins()

describe('workspace bins', () => {
  it('include the scanauth command of @scanauth/cli', () => {
    expect(withBins.find((p) => p.name === '@scanauth/cli')?.bins).toHaveProperty('scanauth')
  })

  for (const pkg of withBins) {
    for (const [command, target] of Object.entries(pkg.bins)) {
      it(`${pkg.name} bin ${command} (${target}): a kept, executable node script that is published`, () => {
        const path = join(pkg.dir, target)
        expect(existsSync(path), `${target} exists without a build`).toBe(true)
        expect(gitIgnores(path), `${target} is not ignored by git, so a clone has it when npm ci links bins`).toBe(false)
        expect(readFileSync(path, 'utf8').split('\n')[0]).toBe('#!/usr/bin/env node')
        expect(() => accessSync(path, constants.X_OK), `${target} is executable`).not.toThrow()
        const published = pkg.files.some((entry) => target.replace(/^\.\//, '') === entry || target.replace(/^\.\//, '').startsWith(`${entry.replace(/\/$/, '')}/`))
        expect(published, `${target} is in "files"`).toBe(true)
      })
    }
  }
})

describe('the scanauth launcher', () => {
  const launcher = join(root, 'packages', 'cli', 'bin', 'scanauth.js')
  const copy = mkdtempSync(join(tmpdir(), 'scanauth-bin-'))
  afterAll(() => rmSync(copy, { recursive: true, force: true }))
  mkdirSync(join(copy, 'bin'))
  copyFileSync(launcher, join(copy, 'bin', 'scanauth.js'))
  // As in packages/cli: an ES module package.
  writeFileSync(join(copy, 'package.json'), '{"type":"module"}\n')
  const runLauncher = (...args: string[]) => spawnSync(process.execPath, [join(copy, 'bin', 'scanauth.js'), ...args], { encoding: 'utf8' })

  it('says how to build when there is no build, and fails', () => {
    rmSync(join(copy, 'dist'), { recursive: true, force: true })
    const result = runLauncher('--help')
    expect(result.status).toBe(1)
    expect(result.stdout).toBe('')
    expect(result.stderr).toBe('scanauth: @scanauth/cli is not built yet (no dist/bin.js); run `npm run build` at the repository root first\n')
  })

  it('runs the build with the arguments as given, and keeps its exit status', () => {
    mkdirSync(join(copy, 'dist'), { recursive: true })
    writeFileSync(join(copy, 'dist', 'bin.js'), 'console.log(JSON.stringify(process.argv.slice(2)))\nprocess.exitCode = 3\n')
    const result = runLauncher('user', 'o_1', '--json')
    expect(result.stderr).toBe('')
    expect(JSON.parse(result.stdout)).toEqual(['user', 'o_1', '--json'])
    expect(result.status).toBe(3)
  })
})
