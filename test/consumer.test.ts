/**
 * The consumer test (issue #10, item 4): every public package as a user gets it from the registry.
 *
 * Each folder under `packages/` is built (unless its dist/ is current), packed with `npm pack`, and
 * installed from the tarballs into a fresh project in the system's temporary folder, outside the
 * repository: no workspace links, no repository node_modules to fall back on. In that project:
 * TypeScript 5.9 and TypeScript 7, each under `module: node16` (ESM and CommonJS files) and
 * `moduleResolution: bundler` with Node's types, and over `@scanauth/core` and `@scanauth/client`
 * without Node's types (a browser or Worker consumer: `types: []`, lib ES2022 + DOM), all strict with
 * skipLibCheck off; every main export loaded as ESM and through `require()`; the README quick
 * start run as ESM and as CommonJS; a real SQLite database; an Express app and a Koa app taking a
 * device from create_scene through a scan in the WeChat emulator to `authorized`, over real sockets.
 * The tarball sizes and the production dependency tree go to `test/consumer/.last-run.txt` (the
 * output shows one line of it).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type RunningApp } from './consumer/app-process'
import { MAIN_EXPORTS } from './consumer/main-exports'
import { consumerManifest, installConsumer, writeConsumer } from './consumer/project'
import { summaryLine, writeRecord } from './consumer/report'
import { lastJsonLine, run, succeeded } from './consumer/run'
import { cjsExportsSource, cjsQuickStart, esmExportsSource, esmQuickStart, GENERATED, readmeQuickStart, type LoadedExports } from './consumer/sources'
import { COMPILERS, compilerVersion, listProblems, nodeTypesReached, typecheck, type CompilerName, type TscCheck } from './consumer/tsc'
import { buildAll, distIsCurrent, entryFiles, offersRequire, packAll, publicPackages, type PackedTarball } from './consumer/workspace'

/** Generous limits: npm install compiles better-sqlite3. Nothing here asserts on time. */
const SETUP_TIMEOUT = 10 * 60_000
const STEP_TIMEOUT = 2 * 60_000

const packages = publicPackages()
/** The packages whose `exports["."]` has a `require` condition: the CommonJS consumer loads those. */
const requireable = Object.fromEntries(packages.filter((p) => offersRequire(p.manifest)).map((p) => [p.name, MAIN_EXPORTS[p.name] ?? []]))

let workDir: string | undefined
let consumer = ''
let tarballs: PackedTarball[] = []

/** The consumer's tsconfigs (test/consumer/fixture), each checked with every compiler. */
const TSCONFIGS = {
  node16: { file: 'tsconfig.node16.json', what: 'module node16 (an ESM and a CommonJS consumer), types ["node"]' },
  bundler: { file: 'tsconfig.bundler.json', what: 'moduleResolution bundler, types ["node"]' },
  web: { file: 'tsconfig.web.json', what: 'no Node (@scanauth/core, @scanauth/client; types [], lib ES2022 + DOM)' },
} as const
type ConfigName = keyof typeof TSCONFIGS
const compilerNames = Object.keys(COMPILERS) as CompilerName[]
const matrix = (Object.keys(TSCONFIGS) as ConfigName[]).flatMap((config) => compilerNames.map((compiler) => [config, compiler] as const))

let versions: Partial<Record<CompilerName, string>> = {}
let checks: TscCheck[] = []

beforeAll(async () => {
  // CI builds right before the tests; a developer who changed a source gets a fresh build.
  if (!packages.every(distIsCurrent)) await buildAll()
  workDir = mkdtempSync(join(tmpdir(), 'scanauth-consumer-'))
  mkdirSync(join(workDir, 'tarballs'))
  tarballs = await packAll(packages, join(workDir, 'tarballs'))
  consumer = join(workDir, 'consumer')
  const quickStart = readmeQuickStart()
  writeConsumer(consumer, consumerManifest(tarballs, packages), {
    [GENERATED.esmExports.source]: esmExportsSource(MAIN_EXPORTS),
    [GENERATED.cjsExports.source]: cjsExportsSource(requireable),
    [GENERATED.esmQuickStart.source]: esmQuickStart(quickStart),
    [GENERATED.cjsQuickStart.source]: cjsQuickStart(quickStart),
  })
  await installConsumer(consumer)
  versions = Object.fromEntries(await Promise.all(compilerNames.map(async (c) => [c, await compilerVersion(consumer, c)] as const)))
  // TypeScript 5.9's node16 check also emits out/, which the tests below run with node; every other
  // run only checks. They are independent, so they run side by side.
  checks = await Promise.all(
    matrix.map(([config, compiler]) => typecheck(consumer, TSCONFIGS[config].file, compiler, config === 'node16' && compiler === 'TypeScript 5.9' ? [] : ['--noEmit'])),
  )
}, SETUP_TIMEOUT)

afterAll(() => {
  if (workDir !== undefined) rmSync(workDir, { recursive: true, force: true })
})

/** Runs a compiled consumer file with node in the consumer folder; its stdout, or throws with its output. */
async function runConsumer(output: string, ...args: string[]): Promise<string> {
  return succeeded(await run(process.execPath, [join('out', output), ...args], { cwd: consumer, timeoutMs: STEP_TIMEOUT }))
}

/** Every main export of `mainExports` as `typeof` says a class or function is. */
function allFunctions(mainExports: Readonly<Record<string, readonly string[]>>): LoadedExports {
  return Object.fromEntries(Object.entries(mainExports).map(([name, exports]) => [name, Object.fromEntries(exports.map((e) => [e, 'function']))]))
}

describe('the packed packages in a fresh consumer project', () => {
  it('covers every public package under packages/', () => {
    expect(packages.map((p) => p.name)).toEqual(Object.keys(MAIN_EXPORTS).sort())
    expect(tarballs.map((t) => t.name).sort()).toEqual(packages.map((p) => p.name))
  })

  it.each(packages.map((p) => p.name))('packs %s with its README and every file its package.json points at', (name) => {
    const pkg = packages.find((p) => p.name === name)
    const tarball = tarballs.find((t) => t.name === name)
    const expected = ['package.json', 'README.md', ...entryFiles(pkg?.manifest ?? { name })]
    expect(expected.filter((file) => !tarball?.files.includes(file)), `missing from ${name}'s tarball`).toEqual([])
  })

  it('installs TypeScript 5.9 and TypeScript 7 side by side', () => {
    for (const compiler of compilerNames) expect(versions[compiler], compiler).toMatch(COMPILERS[compiler].version)
  })

  it.each(matrix.map(([config, compiler]) => [TSCONFIGS[config].what, compiler, config] as const))('type-checks under %s with %s, strict, skipLibCheck off', (_what, compiler, config) => {
    const check = checks.find((c) => c.tsconfig === TSCONFIGS[config].file && c.compiler === compiler)
    expect(check, 'the check ran').toBeDefined()
    const { ours, files } = check!
    const where = `${compiler} (${versions[compiler]}), tsc -p ${TSCONFIGS[config].file}: ${TSCONFIGS[config].what}`
    expect(ours.map((p) => p.text), `${where}: ${ours.length} problem(s) in our sources or our packages' types:\n${listProblems(ours)}\n`).toEqual([])
    if (config === 'web') {
      // Node's types are installed in this folder for the other checks; a program that asks for none
      // must not reach them through our types (a `/// <reference types="node" />`, a dependency's).
      expect(nodeTypesReached(files), `${where}: Node's types were pulled into a program without Node`).toEqual([])
      const ourTypes = files.map((f) => f.file).filter((f) => f.startsWith('node_modules/@scanauth/'))
      // Both main entries in both module kinds (require-types.ts pulls the .d.cts in), and the store door.
      const checked = ['core/dist/index.d.ts', 'core/dist/index.d.cts', 'core/dist/store.d.ts', 'client/dist/index.d.ts', 'client/dist/index.d.cts']
      expect(ourTypes, `${where}: the declarations checked`).toEqual(expect.arrayContaining(checked.map((f) => `node_modules/@scanauth/${f}`)))
    }
  })

  it('loads every main export as an ES module', { timeout: STEP_TIMEOUT }, async () => {
    const loaded = lastJsonLine(await runConsumer(GENERATED.esmExports.output))
    expect(loaded).toEqual(allFunctions(MAIN_EXPORTS))
  })

  it('loads every CommonJS entry with require()', { timeout: STEP_TIMEOUT }, async () => {
    const loaded = lastJsonLine(await runConsumer(GENERATED.cjsExports.output))
    // A package whose code cannot run under require() (vitest refuses it) should offer no `require` entry.
    expect(loaded, 'a package with a `require` condition must load through it').toEqual(allFunctions(requireable))
  })

  it.each([
    ['an ES module', GENERATED.esmQuickStart.output],
    ['a CommonJS module', GENERATED.cjsQuickStart.output],
  ])('runs the README quick start as %s to an authorized device', { timeout: STEP_TIMEOUT }, async (_kind, output) => {
    const status = lastJsonLine(await runConsumer(output))
    expect(status).toMatchObject({ status: 'authorized', sessionToken: expect.any(String), authorization: { type: 'time' } })
  })

  it('opens a real SQLite database with the installed better-sqlite3', { timeout: STEP_TIMEOUT }, async () => {
    const status = lastJsonLine(await runConsumer('sqlite-store.js', consumer))
    expect(status).toMatchObject({ status: 'authorized', sessionToken: expect.any(String) })
  })

  it.each([
    ['Express', '@scanauth/express', 'express-app.js'],
    ['Koa', '@scanauth/koa', 'koa-app.js'],
  ])('%s app with %s: create_scene, a signed scan from the emulator, authorized', { timeout: STEP_TIMEOUT }, async (_framework, _pkg, script) => {
    const running = await startApp(consumer, join('out', script))
    try {
      await createScanAndPoll(running)
    } catch (error) {
      throw new Error(`${String(error)}\n--- app output\n${running.output()}`, { cause: error })
    } finally {
      await running.stop()
    }
  })

  it('records the tarball sizes and a production dependency tree npm finds nothing wrong with', { timeout: STEP_TIMEOUT }, async () => {
    const ls = await run('npm', ['ls', '--omit=dev', '--all'], { cwd: consumer, timeoutMs: STEP_TIMEOUT })
    const notes = checks.flatMap((check) => check.thirdParty.map((p) => `[${check.compiler}, tsc -p ${check.tsconfig}, third-party types] ${p.text}`))
    const record = { tarballs, productionTree: { code: ls.code, text: ls.stdout + ls.stderr }, notes }
    const text = writeRecord(record)
    // The whole record (a tree of some 400 lines) only when npm ls finds something wrong; else one line.
    expect(ls.code, text).toBe(0)
    console.log(summaryLine(record))
  })
})

/** The device's whole path through a running app, checked at every step. */
async function createScanAndPoll({ app, emulator }: RunningApp): Promise<void> {
  const created = await fetch(`${app}/auth/create_scene`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ device_id: 'consumer-tv' }) })
  expect(created.status).toBe(200)
  const { scene_str: scene } = (await created.json()) as { scene_str: string }
  const statusUrl = `${app}/auth/status?scene=${encodeURIComponent(scene)}`
  expect(await (await fetch(statusUrl)).json()).toEqual({ status: 'pending' })

  // The QR code the app created through @scanauth/wechat is a ticket in the emulator; scanning it
  // makes the emulator push a signed, encrypted event to the app's callback middleware.
  const tickets = (await (await fetch(`${emulator}/emulator/tickets`)).json()) as { ticket: string; sceneStr: string }[]
  const ticket = tickets.find((t) => t.sceneStr === scene)?.ticket
  expect(ticket, 'the emulator holds the QR code of the scene').toBeTypeOf('string')
  const scanned = await fetch(`${emulator}/emulator/scan`, { method: 'POST', body: JSON.stringify({ ticket, openid: 'o_consumer_user' }) })
  expect(scanned.status).toBe(200)
  expect(await scanned.json(), 'the callback answered the push').toMatchObject({ status: 200, reply: { Content: expect.any(String) } })

  const polled = (await (await fetch(statusUrl)).json()) as { status: string; session_token?: string }
  expect(polled).toMatchObject({ status: 'authorized', session_token: expect.any(String), authorization: { type: 'time' } })
  const session = await fetch(`${app}/auth/session`, { headers: { authorization: `Bearer ${polled.session_token}` } })
  expect(session.status).toBe(200)
  expect(await session.json()).toMatchObject({ device_id: 'consumer-tv' })
}
