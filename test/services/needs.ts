/**
 * Which tests need which server: the one table the test services' global setup (what to prepare)
 * and their test runner (what to skip, when a server cannot be had) share.
 *
 * A test that needs Redis or PostgreSQL and is not named here fails with ECONNREFUSED when the
 * server is missing, rather than being skipped: add it here.
 */
import { relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

/** A part the tests need beyond Node: a Redis server, the `redis-server` binary for the Cluster test, a PostgreSQL server. */
export type Service = 'redis' | 'redis-cluster' | 'postgres'

/** Every service, in the order they are reported. */
export const SERVICES: readonly Service[] = ['redis', 'redis-cluster', 'postgres']

/** The services' names in messages. */
export const SERVICE_NAMES: Record<Service, string> = {
  redis: 'Redis',
  'redis-cluster': 'the Redis Cluster test',
  postgres: 'PostgreSQL',
}

/**
 * The global setup tells the test workers what could not be had through this variable: JSON,
 * `{ [service]: reason }`. (`SCANAUTH_`-prefixed, so the example tests' child processes drop it.)
 */
export const MISSING_ENV = 'SCANAUTH_TEST_SERVICES_MISSING'

/**
 * The services each test project uses. A project not listed (a new one) gets every service, so a
 * run of it never lacks one; list it here once it is known.
 */
const PROJECT_SERVICES: Record<string, readonly Service[]> = {
  core: [],
  client: [],
  sqlite: [],
  testkit: [],
  express: [],
  koa: [],
  'wechat-emulator': [],
  'wechat-pay': [],
  'example-cli': [],
  cli: ['redis', 'postgres'],
  repo: [],
  redis: ['redis', 'redis-cluster'],
  wechat: ['redis'], // test/shared-store.test.ts
  postgres: ['postgres'],
  'example-express': ['redis', 'postgres'],
  'example-koa': ['redis', 'postgres'],
}

/** The services the test projects named `projects` use together. */
export function servicesFor(projects: readonly string[]): Set<Service> {
  return new Set(projects.flatMap((name) => PROJECT_SERVICES[name] ?? SERVICES))
}

/**
 * Tests skipped when their service is missing: every test of the files under `path` (relative to
 * the repository, `/`-separated), or only those whose name, or an enclosing `describe`'s, matches
 * `name`. A skipped file or `describe` runs none of its hooks either.
 */
interface SkipRule {
  service: Service
  path: string
  name?: RegExp
}

const SKIP_RULES: readonly SkipRule[] = [
  // The first rule that applies gives the reason: the Cluster test's own need comes first.
  { service: 'redis-cluster', path: 'packages/redis/test/cluster.test.ts' },
  { service: 'redis', path: 'packages/redis/test/' },
  { service: 'redis', path: 'packages/wechat/test/shared-store.test.ts', name: /\bon one Redis prefix\b/ },
  { service: 'redis', path: 'examples/', name: /\bon Redis\b/ }, // examples/shared/test/app-suite.ts
  { service: 'postgres', path: 'packages/postgres/test/' },
  { service: 'redis', path: 'packages/cli/test/redis.test.ts' },
  { service: 'postgres', path: 'packages/cli/test/postgres.test.ts' },
  { service: 'postgres', path: 'examples/', name: /\bon PostgreSQL\b/ }, // postgres-suite.ts, start-suite.ts
]

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/** What the global setup found missing, as it passed it on (`{}` when nothing is). */
export function missingServices(env: NodeJS.ProcessEnv = process.env): Partial<Record<Service, string>> {
  const raw = env[MISSING_ENV]
  if (!raw) return {}
  try {
    return JSON.parse(raw) as Partial<Record<Service, string>>
  } catch {
    return {}
  }
}

/** The note a skipped test carries: which part it needs, and why that part is missing. */
export function skipNote(service: Service, reason: string): string {
  return `needs ${SERVICE_NAMES[service]}: ${reason}`
}

/**
 * Why the test file `filepath` (with `names` undefined), or the suite or test `names` (its name and
 * its enclosing suites' names) in it, is skipped; undefined when it runs.
 */
export function skipReason(missing: Partial<Record<Service, string>>, filepath: string, names?: readonly string[]): string | undefined {
  const path = relative(ROOT, filepath).split(sep).join('/')
  for (const rule of SKIP_RULES) {
    const reason = missing[rule.service]
    if (reason === undefined || !path.startsWith(rule.path)) continue
    const applies = rule.name === undefined ? true : names !== undefined && names.some((n) => rule.name!.test(n))
    if (applies) return skipNote(rule.service, reason)
  }
  return undefined
}
