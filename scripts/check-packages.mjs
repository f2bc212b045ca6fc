// The package check of `npm run check`: every public package under packages/, exactly as npm would
// publish it. It builds nothing itself (run `npm run build` first) and fails on any problem:
//
// 1. `npm pack` each package into a temporary folder: the tarball is what a consumer would install;
// 2. publint on that tarball, strict (warnings count as errors) and with suggestions shown, because a
//    suggestion is a packaging problem too (a missing `files` entry, a `types` condition out of order);
// 3. attw (Are the Types Wrong?) on that tarball with the `node16` profile (`esm-only` for a package
//    that offers no `require` condition on purpose): for each entry point the
//    types resolve under Node's ESM and CommonJS resolution and under bundlers, and describe the
//    JavaScript they sit beside (no ESM types for a CJS file, no missing `.d.cts`). The node10 profile
//    is left out because every package needs Node 20.19 (`engines`), which always reads `exports`.
//
// Packages are found by listing packages/*, so a new package is checked without editing this file.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import process from 'node:process'
import { publint } from 'publint'
import { formatMessage } from 'publint/utils'

const root = join(import.meta.dirname, '..')
const attwDir = join(root, 'node_modules', '@arethetypeswrong', 'cli')
const attwBin = join(attwDir, JSON.parse(readFileSync(join(attwDir, 'package.json'), 'utf8')).bin.attw)

/** The public packages: every folder of packages/ with a package.json that is not private. */
function publicPackages() {
  const packagesDir = join(root, 'packages')
  return readdirSync(packagesDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(packagesDir, entry.name, 'package.json')))
    .map((entry) => {
      const dir = join(packagesDir, entry.name)
      return { dir, pkg: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) }
    })
    .filter(({ pkg }) => pkg.private !== true)
}

/** Every file a package.json points consumers at (`main`, `module`, `types`, `exports`), except sources. */
function publishedEntryFiles(pkg) {
  const files = new Set([pkg.main, pkg.module, pkg.types].filter((value) => typeof value === 'string'))
  const walk = (value, condition) => {
    // `@scanauth/source` points the workspace at src/ and is never what a consumer resolves.
    if (condition === '@scanauth/source') return
    if (typeof value === 'string') files.add(value)
    else if (value && typeof value === 'object') for (const [key, next] of Object.entries(value)) walk(next, key)
  }
  walk(pkg.exports, undefined)
  return [...files]
}

/** Runs a command; returns its exit status, its stdout, and stdout and stderr together for reports. */
function run(command, args, cwd) {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', env: { ...process.env, FORCE_COLOR: '0' } })
  if (result.error) throw result.error
  const stdout = result.stdout ?? ''
  return { status: result.status ?? 1, stdout, output: `${stdout}${result.stderr ?? ''}`.trim() }
}

/** Packs a package with npm into `destination`; returns the tarball's path. */
function pack(dir, destination) {
  const packed = run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', destination, '--workspace', relative(root, dir)], root)
  if (packed.status !== 0) throw new Error(`npm pack failed:\n${packed.output}`)
  const [{ filename }] = JSON.parse(packed.stdout)
  return join(destination, filename)
}

/** publint's messages for a packed tarball, formatted; empty when there are none. */
async function publintProblems(tarball) {
  const bytes = readFileSync(tarball)
  // Linting the tarball (not the folder) sees only what is published: a file an entry point names but
  // `files` leaves out is reported as missing.
  const { messages, pkg } = await publint({
    strict: true,
    level: 'suggestion',
    pack: { tarball: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) },
  })
  return messages.map((message) => `publint ${message.type}: ${formatMessage(message, pkg, { color: false }) ?? message.code}`)
}

/** attw's report for a packed tarball; empty when it finds no problem. */
function attwProblems(tarball, profile) {
  // --no-definitely-typed: our packages ship their own types; never look for @types on the registry.
  const checked = run(process.execPath, [attwBin, tarball, '--profile', profile, '--format', 'ascii', '--no-emoji', '--no-color', '--no-definitely-typed'], root)
  return checked.status === 0 ? [] : [`attw (profile ${profile}):\n${checked.output}`]
}

/**
 * The attw profile a package is held to: `node16` (ESM and CommonJS) when its main export offers a
 * `require` condition, `esm-only` when it is ESM only on purpose (the testkit, which imports vitest).
 */
function attwProfile(pkg) {
  const main = pkg.exports?.['.']
  return main && typeof main === 'object' && 'require' in main ? 'node16' : 'esm-only'
}

async function main() {
  const packages = publicPackages()
  const unbuilt = packages.flatMap(({ dir, pkg }) =>
    publishedEntryFiles(pkg)
      .filter((file) => !existsSync(join(dir, file)))
      .map((file) => `${relative(root, join(dir, file))} (${pkg.name})`),
  )
  if (unbuilt.length > 0) {
    console.error(`check-packages: built files are missing — run \`npm run build\` first:\n  ${unbuilt.join('\n  ')}`)
    return 1
  }

  const workDir = mkdtempSync(join(tmpdir(), 'scanauth-check-packages-'))
  let failed = 0
  try {
    for (const { dir, pkg } of packages) {
      const tarball = pack(dir, workDir)
      const profile = attwProfile(pkg)
      const problems = [...(await publintProblems(tarball)), ...attwProblems(tarball, profile)]
      if (problems.length === 0) {
        console.log(`ok   ${pkg.name} (publint strict, attw ${profile})`)
      } else {
        failed++
        console.error(`FAIL ${pkg.name}\n  ${problems.join('\n').replaceAll('\n', '\n  ')}`)
      }
    }
  } finally {
    rmSync(workDir, { recursive: true, force: true })
  }
  console.log(`check-packages: ${packages.length - failed} of ${packages.length} packages without problems`)
  return failed === 0 ? 0 : 1
}

process.exitCode = await main()
