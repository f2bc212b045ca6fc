// `npm run version-packages`: `changeset version`, plus the one correction changesets 2 needs while our
// packages are at 0.x.
//
// Every package has `@scanauth/core` as a peer dependency with a caret range (`^0.1.0`). When core gets
// a minor release, changesets 2 gives every package that peers it a *major* release, so 0.1.0 would
// become 1.0.0 (changesets/changesets#1228; changesets 3 no longer does it, but it needs Node 22).
// Under 0.x a minor release is the breaking one (`^0.1.0` stops at 0.2.0), so the right release for
// those packages is the next minor. This script reads the plan first (`changeset status`), lets
// `changeset version` write everything, then turns each such unplanned 0.x → 1.0.0 into 0.(x+1).0 in
// the package's version, every range of our packages that names it, and the changelogs. A 1.0.0 that a
// changeset asked for (`major`) is left alone.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import process from 'node:process'

const root = join(import.meta.dirname, '..')
const changesetBin = join(root, 'node_modules', '@changesets', 'cli', 'bin.js')
const DEPENDENCY_FIELDS = ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies']

/** Runs the changesets CLI with our terminal; throws when it fails. */
function changeset(...args) {
  const result = spawnSync(process.execPath, [changesetBin, ...args], { cwd: root, stdio: 'inherit' })
  if (result.error) throw result.error
  if (result.status !== 0) throw new Error(`changeset ${args.join(' ')} exited with ${result.status}`)
}

/** The release plan `changeset version` is about to apply. */
function releasePlan() {
  const dir = mkdtempSync(join(tmpdir(), 'scanauth-version-'))
  try {
    const file = join(dir, 'plan.json')
    changeset('status', `--output=${file}`)
    return JSON.parse(readFileSync(file, 'utf8'))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Packages a peer bump would take from 0.x to 1.0.0 without a changeset asking for a major: name → the right version. */
function unplannedMajors(plan) {
  const askedMajor = new Set(plan.changesets.flatMap((set) => set.releases.filter((r) => r.type === 'major').map((r) => r.name)))
  const corrections = new Map()
  for (const release of plan.releases) {
    const [oldMajor, oldMinor] = release.oldVersion.split('.').map(Number)
    if (oldMajor === 0 && release.newVersion === '1.0.0' && !askedMajor.has(release.name)) {
      corrections.set(release.name, `0.${oldMinor + 1}.0`)
    }
  }
  return corrections
}

/** Every workspace folder (packages/*, examples/*) with a package.json. */
function workspaceDirs() {
  return ['packages', 'examples'].flatMap((group) =>
    readdirSync(join(root, group), { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && existsSync(join(root, group, entry.name, 'package.json')))
      .map((entry) => join(root, group, entry.name)),
  )
}

/** Rewrites one workspace's package.json and CHANGELOG.md for the corrected versions. */
function applyCorrections(dir, corrections) {
  const pkgFile = join(dir, 'package.json')
  const pkg = JSON.parse(readFileSync(pkgFile, 'utf8'))
  const own = corrections.get(pkg.name)
  if (own) pkg.version = own
  for (const field of DEPENDENCY_FIELDS) {
    for (const [name, range] of Object.entries(pkg[field] ?? {})) {
      const target = corrections.get(name)
      // Only a range `changeset version` just wrote can name 1.0.0 of a package that was at 0.x.
      if (target && /^[\^~]?1\.0\.0$/.test(range)) pkg[field][name] = range.replace('1.0.0', target)
    }
  }
  writeFileSync(pkgFile, `${JSON.stringify(pkg, null, 2)}\n`)

  const changelogFile = join(dir, 'CHANGELOG.md')
  if (!existsSync(changelogFile)) return
  let changelog = readFileSync(changelogFile, 'utf8')
  if (own) changelog = changelog.replace(/^## 1\.0\.0$/m, `## ${own}`)
  for (const [name, target] of corrections) changelog = changelog.replaceAll(`${name}@1.0.0`, `${name}@${target}`)
  writeFileSync(changelogFile, changelog)
}

const corrections = unplannedMajors(releasePlan())
changeset('version')
if (corrections.size > 0) {
  for (const dir of workspaceDirs()) applyCorrections(dir, corrections)
  for (const [name, version] of corrections) console.log(`version-packages: ${name} is ${version}, not 1.0.0 (a peer bump under 0.x is a minor)`)
}
