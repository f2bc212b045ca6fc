/**
 * `runCli` in this process, the function the `scanauth` bin calls: every malformed command line and
 * every bad store configuration is refused with one line and exit status 2 before anything is
 * opened (a live SQLite file served meanwhile stays byte for byte the same, and no default file or
 * folder appears), the help texts, and the version. The same refusals as processes: sqlite.test.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SqliteStore } from '@scanauth/sqlite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EXIT_STATUS, runCli, ScanAuthCliError } from '../src/index'
import { COMMANDS } from '../src/run'
import packageJson from '../package.json'
import { Device, keepWaiting, startServer, type LiveServer } from './support/server'
import { sqliteSnapshot } from './support/snapshots'

/** One in-process run: exit status and what was printed. */
async function run(argv: string[], env: Record<string, string> = {}): Promise<{ status: number; stdout: string; stderr: string }> {
  let stdout = ''
  let stderr = ''
  const status = await runCli(argv, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), env })
  return { status, stdout, stderr }
}

/** Expects a refusal with `status`: nothing on standard output, one line on standard error that matches. */
function expectRefused(result: { status: number; stdout: string; stderr: string }, status: number, pattern: RegExp, argv: string[]): void {
  expect({ argv, status: result.status, stdout: result.stdout, lines: result.stderr.split('\n').length, end: result.stderr.endsWith('\n') }).toEqual({
    argv,
    status,
    stdout: '',
    lines: 2,
    end: true,
  })
  expect(result.stderr.trimEnd()).toMatch(pattern)
}

describe('runCli refuses malformed command lines and store configurations', () => {
  let dir: string
  let file: string
  let store: SqliteStore
  let server: LiveServer
  let waiter: ReturnType<typeof keepWaiting>
  const on = (...argv: string[]) => [...argv, '--sqlite', file]

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'scanauth-cli-run-'))
    file = join(dir, 'scanauth.sqlite')
    store = new SqliteStore({ filename: file })
    server = await startServer(store)
    const kiosk = new Device(server.url, 'kiosk')
    await server.auth.handleScan({ sceneStr: await kiosk.createScene(), openid: 'o6_dave' })
    waiter = keepWaiting(kiosk, await kiosk.createScene())
  })

  afterAll(async () => {
    await waiter?.stop()
    await server?.close()
    await store?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('usage errors (exit 2): one line each, and the store file stays byte for byte the same', async () => {
    const long = 'o'.repeat(129)
    const refusals: Array<[string[], 2, RegExp]> = [
    [on('frobnicate'), 2, /^scanauth: unknown command "frobnicate"; the commands are user, grant, revoke, signout, ledger, orders, purge, reminders, migrate \(see scanauth --help\)$/],
    [on('user'), 2, /^scanauth: user needs <openid> \(see scanauth user --help\)$/],
    [on('user', 'o6_dave', 'o6_eve'), 2, /user takes <openid>, not also "o6_eve"/],
    [on('user', 'o6_dave', '--frob'), 2, /^scanauth: unknown option --frob \(see scanauth user --help\)$/],
    [on('user', 'o6_dave', '--json', '--json'), 2, /--json is given more than once/],
    [on('user', long), 2, /openid must be at most 128 characters, not 129/],
    [on('user', 'o6\u0007bell'), 2, /openid must not contain control characters/],
    [on('signout', long), 2, /openid must be at most 128/],
    [on('ledger', long), 2, /openid must be at most 128/],
    [on('orders', long), 2, /openid must be at most 128/],
    [on('grant', long, '--days', '3'), 2, /openid must be at most 128/],
    [on('grant', 'o6_dave', '--days', '1.5'), 2, /--days must be a whole number from 1 to 36525, not "1\.5"/],
    [on('grant', 'o6_dave', '--days', '0'), 2, /--days must be a whole number from 1 to 36525, not "0"/],
    [on('grant', 'o6_dave', '--days', '36526'), 2, /--days must be a whole number from 1 to 36525/],
    [on('grant', 'o6_dave', '--days', '1e3'), 2, /--days must be a whole number/],
    [on('grant', 'o6_dave', '--days', '0x10'), 2, /--days must be a whole number/],
    [on('grant', 'o6_dave', '--days', '-3'), 2, /--days needs a value/],
    [on('grant', 'o6_dave', '--days'), 2, /--days needs a value/],
    [on('grant', 'o6_dave', '--points', '2.5'), 2, /--points must be a whole number/],
    [on('grant', 'o6_dave', '--days', '3', '--points', '5'), 2, /grant needs exactly one of --days N and --points N/],
    [on('grant', 'o6_dave'), 2, /grant needs exactly one of --days N and --points N/],
    [on('grant', 'o6_dave', '--days', '3', '--days', '4'), 2, /--days is given more than once/],
    [on('grant', 'o6_dave', '--points', '10', '--source', 'free'), 2, /--source free is reserved for the free trial/],
    [on('grant', 'o6_dave', '--points', '10', '--idempotency-key', 'k'.repeat(129)), 2, /--idempotency-key must be at most 128 characters/],
    [on('grant', 'o6_dave', '--points', '10', '--json=yes'), 2, /--json takes no value/],
    [on('revoke'), 2, /revoke needs <authorizationId>/],
    [on('revoke', 'abc'), 2, /the authorization id must be a whole number from 1/],
    [on('revoke', '0'), 2, /the authorization id must be a whole number from 1/],
    [on('revoke', '1.0'), 2, /the authorization id must be a whole number/],
    [on('revoke', '1', '--reason', ''), 2, /--reason must be 1 to 500 characters/],
    [on('revoke', '1', '--reason', 'r'.repeat(501)), 2, /--reason must be 1 to 500 characters/],
    [on('ledger', 'o6_dave', '--limit', '1001'), 2, /--limit must be a whole number from 1 to 1000/],
    [on('ledger', 'o6_dave', '--limit', '0'), 2, /--limit must be a whole number from 1 to 1000/],
    [on('ledger', 'o6_dave', '--after', 'x'), 2, /--after must be a whole number from 0/],
    [on('purge', 'now'), 2, /purge takes no arguments, not also "now"/],
    [on('migrate', '--days', '3'), 2, /^scanauth: unknown option --days \(see scanauth migrate --help\)$/],
    [on('reminders', 'now'), 2, /^scanauth: reminders takes no arguments, not also "now" \(see scanauth reminders --help\)$/],
    [on('reminders', '--now'), 2, /--now needs a value/],
    [on('reminders', '--now', 'tomorrow'), 2, /^scanauth: --now must be an ISO 8601 time with its zone, e\.g\. 2026-12-01T08:00:00Z, not "tomorrow" \(see scanauth reminders --help\)$/],
    [on('reminders', '--now', '2026-12-01T08:00:00'), 2, /--now must be an ISO 8601 time with its zone/],
    [on('reminders', '--now', '2026-02-30T08:00:00Z'), 2, /--now must be an ISO 8601 time/],
    [on('reminders', '--now', '2026-12-01T24:00:00Z'), 2, /--now must be an ISO 8601 time/],
    [on('reminders', '--now', '1969-12-31T23:59:59Z'), 2, /--now must be an ISO 8601 time/],
    [on('reminders', '--dry-run=yes'), 2, /--dry-run takes no value/],
    [on('reminders', '--dry-run', '--dry-run'), 2, /--dry-run is given more than once/],
    [on('reminders', '--limit', '5'), 2, /^scanauth: unknown option --limit \(see scanauth reminders --help\)$/],
    [on('user', 'o6_dave', '--redis-prefix', 'x:'), 2, /--redis-prefix applies to a Redis store, but the store is sqlite \(--sqlite\)/],
    [on('user', 'o6_dave', '--pg-schema', 'x'), 2, /--pg-schema applies to a PostgreSQL store/],
    [on('user', 'o6_dave', '--redis', 'redis://127.0.0.1:6379'), 2, /give one store, not --sqlite and --redis/],
    ]
    const before = sqliteSnapshot(file)
    for (const [argv, status, pattern] of refusals) expectRefused(await run(argv), status, pattern, argv)
    expect(sqliteSnapshot(file)).toBe(before)
    expect(refusals.length).toBeGreaterThan(35)
  })

  it("configuration errors (exit 2), before any store is opened; a URL's password is never echoed", async () => {
    const refusals: Array<[string[], Record<string, string>, RegExp]> = [
      [['user', 'o6_dave'], { SCANAUTH_STORE: 'memory' }, /^scanauth: SCANAUTH_STORE=memory: a memory store lives inside one server process and no other process can reach it; point the CLI at a sqlite, redis or postgres store$/],
      [['user', 'o6_dave'], { SCANAUTH_STORE: 'mongo' }, /^scanauth: SCANAUTH_STORE must be sqlite, redis or postgres, not "mongo"$/],
      [['user', 'o6_dave', '--redis-prefix', 'p:'], {}, /--redis-prefix applies to a Redis store, but the store is sqlite \(SCANAUTH_STORE=sqlite\)/],
      [['user', 'o6_dave', '--pg-schema', 'auth'], { SCANAUTH_STORE: 'redis' }, /--pg-schema applies to a PostgreSQL store, but the store is redis \(SCANAUTH_STORE=redis\)/],
      [['user', 'o6_dave', '--sqlite', 'a.sqlite', '--postgres', 'postgres://db/x'], {}, /give one store, not --sqlite and --postgres/],
      [['user', 'o6_dave', '--redis', 'http://127.0.0.1:6379'], {}, /--redis must be a redis:\/\/ or rediss:\/\/ URL/],
      [['user', 'o6_dave'], { SCANAUTH_STORE: 'redis', REDIS_URL: 'localhost:6379' }, /REDIS_URL must be a redis:\/\/ or rediss:\/\/ URL/],
      [['user', 'o6_dave', '--postgres', 'mysql://u:secret@db/x'], {}, /^scanauth: --postgres must be a postgres:\/\/ or postgresql:\/\/ URL/],
      [['user', 'o6_dave'], { SCANAUTH_STORE: 'postgres', DATABASE_URL: 'not a url' }, /DATABASE_URL must be a postgres:\/\/ or postgresql:\/\/ URL/],
      [['user', 'o6_dave', '--postgres', 'postgres://db/x', '--pg-schema', 'Auth'], {}, /--pg-schema must be 1 to 40 characters of a-z, 0-9 and _, not starting with a digit, not "Auth"/],
      [['user', 'o6_dave'], { SCANAUTH_STORE: 'postgres', SCANAUTH_PG_SCHEMA: '1st' }, /SCANAUTH_PG_SCHEMA must be 1 to 40 characters/],
      [['user', 'o6_dave', '--redis', 'redis://127.0.0.1:6379', '--redis-prefix', ''], {}, /--redis-prefix must be 1 to 256 characters/],
    ]
    for (const [argv, env, pattern] of refusals) {
      const result = await run(argv, env)
      expectRefused(result, 2, pattern, argv)
      expect(result.stderr).not.toContain('secret')
    }
    // Usage errors come first: a bad line is refused even where no store could be found.
    expectRefused(await run(['grant', 'o6_dave', '--days', '1.5'], { SCANAUTH_STORE: 'memory' }), 2, /--days must be a whole number/, ['grant'])
  })

  it("reminders: the servers' reminder and WeChat variables are checked before the store is opened (exit 2, one line); a secret is never echoed", async () => {
    const wechat = { WECHAT_APP_ID: 'wx_cli_app', WECHAT_APP_SECRET: 'hunter2-secret' }
    const leads = { SCANAUTH_REMINDERS: '3,1', ...wechat }
    const refusals: Array<[string[], Record<string, string>, RegExp]> = [
      [[], {}, /^scanauth: SCANAUTH_REMINDERS is not set: give the lead days the servers remind at \(e\.g\. SCANAUTH_REMINDERS=3,1\), with the store and WeChat variables of the servers$/],
      [['--dry-run'], { SCANAUTH_REMINDERS: '  ' }, /SCANAUTH_REMINDERS is not set/],
      [[], { ...wechat, SCANAUTH_REMINDERS: '3,x' }, /^scanauth: SCANAUTH_REMINDERS must be the days before access ends to remind at, separated by commas \(e\.g\. 3,1, or 0\.0005 for about 43 s\), each above 0 and at most 60, each once, not "3,x"$/],
      [[], { ...wechat, SCANAUTH_REMINDERS: '0' }, /SCANAUTH_REMINDERS must be .* not "0"$/],
      [[], { ...wechat, SCANAUTH_REMINDERS: '61' }, /SCANAUTH_REMINDERS must be .* at most 60/],
      [[], { ...wechat, SCANAUTH_REMINDERS: '3,1,3' }, /SCANAUTH_REMINDERS must be .* each once, not "3,1,3"$/],
      [[], { ...wechat, SCANAUTH_REMINDERS: '1e1' }, /SCANAUTH_REMINDERS must be/],
      [[], { ...wechat, SCANAUTH_REMINDERS: '3,' }, /SCANAUTH_REMINDERS must be/],
      [[], { SCANAUTH_REMINDERS: '3,1' }, /^scanauth: scanauth reminders sends through the Official Account: set WECHAT_APP_ID and WECHAT_APP_SECRET as for the servers \(and WECHAT_API_BASE for an emulator or a proxy\); a --dry-run needs neither$/],
      [[], { SCANAUTH_REMINDERS: '3,1', WECHAT_APP_ID: 'wx_cli_app' }, /^scanauth: WECHAT_APP_SECRET must be set too: the Official Account needs both$/],
      [['--dry-run'], { SCANAUTH_REMINDERS: '3,1', WECHAT_APP_SECRET: 'hunter2-secret' }, /^scanauth: WECHAT_APP_ID must be set too/],
      [['--dry-run'], { SCANAUTH_REMINDERS: '3,1', WECHAT_API_BASE: 'http://127.0.0.1:9' }, /^scanauth: WECHAT_API_BASE needs WECHAT_APP_ID and WECHAT_APP_SECRET$/],
      [[], { ...leads, WECHAT_API_BASE: 'ftp://127.0.0.1:9' }, /WECHAT_API_BASE must be an http\(s\) URL such as https:\/\/api\.weixin\.qq\.com, not "ftp:\/\/127\.0\.0\.1:9"$/],
      [[], { ...leads, SCANAUTH_REMINDERS_POINTS_BELOW: '0' }, /SCANAUTH_REMINDERS_POINTS_BELOW must be a whole number of points from 1/],
      [[], { ...leads, SCANAUTH_REMINDERS_POINTS_BELOW: '2.5' }, /SCANAUTH_REMINDERS_POINTS_BELOW must be a whole number/],
      [[], { ...leads, WECHAT_SUBSCRIBE_TEMPLATE_ID: 'no spaces please' }, /WECHAT_SUBSCRIBE_TEMPLATE_ID must be a template id from the Official Account platform/],
      [[], { ...leads, WECHAT_TEMPLATE_ID_RENEWAL: 'a'.repeat(65) }, /WECHAT_TEMPLATE_ID_RENEWAL must be a template id/],
      [[], { ...leads, WECHAT_TEMPLATE_FIELDS_RENEWAL: '{"thing1":"headline"}' }, /^scanauth: WECHAT_TEMPLATE_FIELDS_RENEWAL maps the fields of WECHAT_TEMPLATE_ID_RENEWAL: set that too, or unset it$/],
      [[], { ...leads, WECHAT_TEMPLATE_ID_RENEWAL: 'TPL', WECHAT_TEMPLATE_FIELDS_RENEWAL: 'thing1=headline' }, /WECHAT_TEMPLATE_FIELDS_RENEWAL must be a JSON object .*; it is not JSON$/],
      [[], { ...leads, WECHAT_TEMPLATE_ID_RENEWAL: 'TPL', WECHAT_TEMPLATE_FIELDS_RENEWAL: '{}' }, /WECHAT_TEMPLATE_FIELDS_RENEWAL must be a JSON object .*, with 1 to 20 fields$/],
      [[], { ...leads, WECHAT_TEMPLATE_ID_RENEWAL: 'TPL', WECHAT_TEMPLATE_FIELDS_RENEWAL: '{"thing1":"price"}' }, /; the fact of "thing1" is "price"$/],
      [[], { ...leads, WECHAT_TEMPLATE_ID_RENEWAL: 'TPL', WECHAT_TEMPLATE_FIELDS_RENEWAL: '{"1st":"ends"}' }, /; "1st" is not a field name/],
      [[], { ...leads, SCANAUTH_PUBLIC_URL: 'app.example' }, /^scanauth: SCANAUTH_PUBLIC_URL must be an http\(s\) URL without a query, such as https:\/\/app\.example, not "app\.example"$/],
      [[], { ...leads, SCANAUTH_PUBLIC_URL: 'https://app.example/?x=1' }, /SCANAUTH_PUBLIC_URL must be an http\(s\) URL without a query/],
      // A usage error comes first.
      [['--now', 'soon'], {}, /--now must be an ISO 8601 time/],
    ]
    const before = sqliteSnapshot(file)
    for (const [extra, env, pattern] of refusals) {
      const argv = on('reminders', ...extra)
      const result = await run(argv, env)
      expectRefused(result, 2, pattern, [...argv, JSON.stringify(env)])
      expect(result.stderr).not.toContain('hunter2')
    }
    expect(sqliteSnapshot(file)).toBe(before)
  })

  it('reminders --dry-run: who is due at --now, without an Official Account, and the store stays byte for byte the same', async () => {
    const before = sqliteSnapshot(file)
    const today = await run(on('reminders', '--dry-run', '--json'), { SCANAUTH_REMINDERS: '3,1' })
    expect(today.status).toBe(0)
    expect(JSON.parse(today.stdout)).toMatchObject({ dryRun: true, leadDays: [3, 1], pointsBelow: null, channels: [], links: null, checked: 0, due: 0, planned: [], problems: [] })
    // o6_dave's free trial (7 days) ends within a day of this time.
    const at = new Date(Date.now() + 6.5 * 86_400_000).toISOString()
    const later = await run(on('reminders', '--dry-run', '--now', at, '--json'), { SCANAUTH_REMINDERS: '3,1', SCANAUTH_PUBLIC_URL: 'https://app.example/' })
    expect(later.status).toBe(0)
    const user = await server.auth.getUser({ openid: 'o6_dave' })
    expect(JSON.parse(later.stdout)).toMatchObject({
      now: at,
      dryRun: true,
      links: 'https://app.example/auth/m/',
      checked: 1,
      due: 1,
      sent: 0,
      planned: [{ userId: user?.id, authorizationId: user?.current?.id, leadDays: 1, kind: 'time' }],
    })
    const text = await run(on('reminders', '--dry-run', '--now', at), { SCANAUTH_REMINDERS: '3,1' })
    expect(text.stdout).toBe(
      `dry run at ${at.replace(/\.\d{3}Z$/, 'Z')} (leads 3, 1 days): 1 due, nothing sent or recorded (a pass skips those reminded already); 0 renewed; 1 authorization checked\n  user #${user?.id}  auth #${user?.current?.id}  time  1 day before the end\n`,
    )
    expect(sqliteSnapshot(file)).toBe(before)
  })

  it('variables set to white space count as unset, as in the examples; options win over variables', async () => {
    const result = await run(['user', 'o6_dave', '--json', '--sqlite', file], { SCANAUTH_STORE: 'redis', REDIS_URL: 'redis://127.0.0.1:1' })
    expect(result.status).toBe(0)
    const blank = await run(['user', 'o6_dave', '--json'], { SCANAUTH_STORE: '  ', SCANAUTH_SQLITE_FILE: file })
    expect(blank.status).toBe(0)
    expect(JSON.parse(blank.stdout).user.openid).toBe('o6_dave')
  })
})

describe('help and version', () => {
  it('scanauth --help lists every command with its usage, the store options and the exit statuses', async () => {
    for (const argv of [['--help'], ['-h'], ['--help', '--json']]) {
      const result = await run(argv)
      expect(result).toMatchObject({ status: 0, stderr: '' })
      for (const command of COMMANDS) expect(result.stdout).toContain(`\n  ${command.usage}\n      ${command.summary}\n`)
      for (const option of ['--sqlite FILE', '--redis URL', '--redis-prefix P', '--postgres URL', '--pg-schema S', '--json', '--version']) expect(result.stdout).toContain(option)
      for (const variable of ['SCANAUTH_STORE', 'SCANAUTH_SQLITE_FILE', 'REDIS_URL', 'SCANAUTH_REDIS_PREFIX', 'DATABASE_URL', 'SCANAUTH_PG_SCHEMA']) expect(result.stdout).toContain(variable)
      expect(result.stdout).toContain('Exit status: 0 done; 1 refused or failed')
    }
    expect(COMMANDS.map((c) => c.name)).toEqual(['user', 'grant', 'revoke', 'signout', 'ledger', 'orders', 'purge', 'reminders', 'migrate'])
  })

  it.each(['user', 'grant', 'revoke', 'signout', 'ledger', 'orders', 'purge', 'reminders', 'migrate'])('scanauth %s --help describes the command and its options', async (name) => {
    const command = COMMANDS.find((c) => c.name === name)
    for (const argv of [[name, '--help'], ['--help', name], [name, '-h', '--frob', 'extra']]) {
      const result = await run(argv)
      expect(result).toMatchObject({ status: 0, stderr: '' })
      expect(result.stdout.startsWith(`Usage: scanauth ${command?.usage} [store options] [--json]\n`)).toBe(true)
      for (const option of Object.keys(command?.options ?? {})) expect(result.stdout).toContain(`--${option}`)
      expect(result.stdout).toContain('Examples:\n  scanauth ' + name)
    }
  })

  it('--version prints the package version; no command at all is a usage error', async () => {
    expect(await run(['--version'])).toEqual({ status: 0, stdout: `${packageJson.version}\n`, stderr: '' })
    expectRefused(await run([]), 2, /^scanauth: no command given \(see scanauth --help\)$/, [])
    expectRefused(await run(['user', 'o6_dave', '--version']), 2, /unknown option --version/, ['user', '--version'])
  })

  it('ScanAuthCliError carries a code and its exit status', () => {
    const error = new ScanAuthCliError('usage', 'two\nlines')
    expect(error).toMatchObject({ name: 'ScanAuthCliError', code: 'usage', exitStatus: 2, message: 'two lines' })
    expect(Object.entries(EXIT_STATUS).filter(([, s]) => s === 2).map(([c]) => c)).toEqual(['usage', 'invalid_config'])
  })
})
