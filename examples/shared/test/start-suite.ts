/**
 * Boots an example server exactly as a person does: `npm start` / `npm run start:koa`, npm itself run
 * from the repository root, with `PORT=0` and the SQLite file in a fresh temporary folder that does
 * not exist yet (so the server must create it). Reads the address from the log, uses the page and the
 * whole flow, then sends SIGTERM to npm (what `kill <pid of npm>` or a process manager does) or to the
 * process npm started, and expects a clean exit of everything.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { fetchJson, postJson } from '@scanauth/testkit'
import { TEST_DATABASE_URL, testDatabase } from './postgres-support'

const ROOT = fileURLToPath(new URL('../../../', import.meta.url))

interface Spawned {
  /** npm. */
  child: ChildProcess
  url: string
  output(): string
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

/** Runs `npm run <script>` from the repository root and waits for its "listening on" line. */
async function spawnScript(script: string, env: NodeJS.ProcessEnv): Promise<Spawned> {
  const child = spawn('npm', ['run', script], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // its own process group, so cleanup can reach every process npm started
  })
  let output = ''
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((ok) => child.once('exit', (code, signal) => ok({ code, signal })))
  const url = await new Promise<string>((ok, fail) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const match = /listening on (http:\/\/\S+)/.exec(output)
      if (match) ok(match[1] as string)
    }
    child.stdout?.on('data', onData)
    child.stderr?.on('data', onData)
    // 'close', not 'exit': it comes once the output pipes are drained, so the message has all of it.
    child.once('close', (code, signal) => fail(new Error(`${script} exited (${code ?? signal}) before listening:\n${output}`)))
  })
  return { child, url, output: () => output, exited }
}

/** The processes of `pid`'s group still running (npm's, once npm has exited: anything left behind). */
function groupAlive(pid: number): string[] {
  try {
    return execFileSync('ps', ['-o', 'pid=,args=', '-g', String(pid)], { encoding: 'utf8' }).split('\n').filter((line) => line.trim() !== '')
  } catch {
    return [] // ps exits 1 when it lists nothing
  }
}

/** The process npm started for the script (the script's command: `exec` makes the shell become it). */
function scriptProcess(npm: number): { pid: number; args: string } {
  const [line] = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(npm)], { encoding: 'utf8' }).trim().split('\n')
  const [, pid, args] = /^\s*(\d+)\s+(.*)$/.exec(line ?? '') ?? []
  return { pid: Number(pid), args: args ?? '' }
}

/** Registers the suite that boots the root script `script` (`start` or `start:koa`) of `framework`'s example. */
export function describeNpmStart(script: 'start' | 'start:koa', framework: 'express' | 'koa'): void {
  let spawned: Spawned | undefined
  let tmp: string | undefined
  const database = testDatabase()
  afterAll(() => database.end())
  afterEach(async () => {
    const child = spawned?.child
    if (child?.pid !== undefined && groupAlive(child.pid).length > 0) {
      // The test failed before its SIGTERM, or left a process behind: end the group we started.
      process.kill(-child.pid, 'SIGKILL')
      await spawned?.exited
    }
    spawned = undefined
    if (tmp) rmSync(tmp, { recursive: true, force: true })
    await database.cleanup()
  })

  describe(`npm run ${script}`, () => {
    it('starts with SQLite and the emulator on a fresh machine, serves the page and the flow, and stops when npm gets SIGTERM', async () => {
      tmp = mkdtempSync(join(tmpdir(), `scanauth-npm-${framework}-`))
      const sqliteFile = join(tmp, 'data', 'scanauth.sqlite') // its folder does not exist yet, as on a fresh clone
      spawned = await spawnScript(script, { ...cleanEnv(), PORT: '0', SCANAUTH_STORE: 'sqlite', SCANAUTH_SQLITE_FILE: sqliteFile })
      const { url } = spawned
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/) // this machine only, without HOST
      expect(spawned.output()).toContain(`scanauth example (${framework}): store sqlite`)

      const page = await fetch(`${url}/`)
      expect(await page.text()).toContain('Sign in with WeChat')
      expect((await fetchJson(`${url}/demo/config`)).body).toEqual({ framework, store: 'sqlite', emulator: true, demo_openid: 'o_emulator_demo_user', pay_emulator: true, phone_pay: true, confirm: 'scan', reminders: false })
      expect((await fetchJson(`${url}/auth/plans`)).body).toHaveLength(3) // the default catalog
      expect(spawned.output()).toMatch(/WeChat Pay emulator at http:\/\/127\.0\.0\.1:\d+ \(merchant 1900000001\)/)

      const created = await postJson(`${url}/auth/create_scene`, { device_id: 'npm-start' })
      expect(created.status).toBe(200)
      const scene = created.body.scene_str as string
      expect((await fetch(created.body.qr_url)).headers.get('content-type')).toBe('image/png')
      expect((await postJson(`${url}/demo/emulator-scan`, { scene_str: scene, openid: 'phone-npm' })).status).toBe(200)
      const polled = await fetchJson(`${url}/auth/status?scene=${scene}`)
      expect(polled.body.status).toBe('authorized')
      const session = await fetchJson(`${url}/auth/session`, { headers: { authorization: `Bearer ${polled.body.session_token}` } })
      expect(session.body.device_id).toBe('npm-start')

      // `kill <npm's pid>`: npm passes the signal on to the script's process, which shuts down; npm
      // exits with it, and nothing is left running (a shell between them would die and orphan it).
      const npm = spawned.child.pid as number
      spawned.child.kill('SIGTERM')
      expect(await spawned.exited).toEqual({ code: 0, signal: null })
      expect(spawned.output()).toContain('SIGTERM: shutting down')
      expect(spawned.output()).toContain('stopped')
      await expect.poll(() => groupAlive(npm), { timeout: 5000 }).toEqual([])
      expect(existsSync(sqliteFile)).toBe(true)
      expect(spawned.output()).toContain(`scan ${scene} by phone-npm: authorized`)
    })

    it('starts on PostgreSQL from DATABASE_URL and SCANAUTH_PG_SCHEMA, migrating the schema, and stops when the process npm started gets SIGTERM', async () => {
      const schema = database.schema()
      spawned = await spawnScript(script, { ...cleanEnv(), PORT: '0', SCANAUTH_STORE: 'postgres', DATABASE_URL: TEST_DATABASE_URL, SCANAUTH_PG_SCHEMA: schema })
      const { url } = spawned
      expect(spawned.output()).toContain(`scanauth example (${framework}): store postgres postgres://`)
      expect(spawned.output()).toContain(`(schema ${schema})`)
      expect((await fetchJson(`${url}/demo/config`)).body).toEqual({ framework, store: 'postgres', emulator: true, demo_openid: 'o_emulator_demo_user', pay_emulator: true, phone_pay: true, confirm: 'scan', reminders: false })

      const scene = (await postJson(`${url}/auth/create_scene`, { device_id: 'npm-start-pg' })).body.scene_str as string
      expect((await postJson(`${url}/demo/emulator-scan`, { scene_str: scene, openid: 'phone-npm-pg' })).status).toBe(200)
      const polled = await fetchJson(`${url}/auth/status?scene=${scene}`)
      expect(polled.body.status).toBe('authorized')

      // The script's own process (tsx, which the shell became): it stops, and npm exits 0 with it.
      const npm = spawned.child.pid as number
      const started = scriptProcess(npm)
      expect(started.args).toMatch(/\/tsx --conditions=@scanauth\/source /)
      process.kill(started.pid, 'SIGTERM')
      expect(await spawned.exited).toEqual({ code: 0, signal: null })
      expect(spawned.output()).toContain('SIGTERM: shutting down')
      expect(spawned.output()).toContain('stopped')
      await expect.poll(() => groupAlive(npm), { timeout: 5000 }).toEqual([])
      const sessions = await database.pool.query(`SELECT token, device_id FROM "${schema}".scanauth_sessions`)
      expect(sessions.rows).toEqual([{ token: polled.body.session_token, device_id: 'npm-start-pg' }])
    })

    it('exits 1 naming the SQLite file it cannot open and the variable that set it', async () => {
      tmp = mkdtempSync(join(tmpdir(), `scanauth-npm-${framework}-`))
      const folder = join(tmp, 'not-a-file') // a folder where the database file should be
      mkdirSync(folder)
      const failed = spawnScript(script, { ...cleanEnv(), PORT: '0', SCANAUTH_STORE: 'sqlite', SCANAUTH_SQLITE_FILE: folder })
      await expect(failed).rejects.toThrow(`${script} exited (1) before listening`)
      await expect(failed).rejects.toThrow(`scanauth example failed to start: cannot open the SQLite file ${folder} (SCANAUTH_SQLITE_FILE): `)
    })

    it('exits 1 saying to set PORT when the port is taken', async () => {
      const taken = createServer()
      await new Promise<void>((ok) => taken.listen(0, '127.0.0.1', ok))
      try {
        const { port } = taken.address() as AddressInfo
        const failed = spawnScript(script, { ...cleanEnv(), PORT: String(port), SCANAUTH_STORE: 'memory' })
        await expect(failed).rejects.toThrow(`scanauth example failed to start: port ${port} on 127.0.0.1 is already in use: set PORT to another port (PORT=0 picks a free one)`)
      } finally {
        await new Promise((ok) => taken.close(ok))
      }
    })

    it('exits 1 at start, naming the variable, for a scene lifetime core would refuse', async () => {
      const failed = spawnScript(script, { ...cleanEnv(), PORT: '0', SCANAUTH_STORE: 'memory', SCANAUTH_SCENE_TTL_SECONDS: '0' })
      await expect(failed).rejects.toThrow('scanauth example failed to start: SCANAUTH_SCENE_TTL_SECONDS must be an integer from 1 to 2592000, not "0"')
    })

    it('exits 1 at start, in one line, for a real Official Account with the WeChat Pay emulator (SCANAUTH_PLANS set, no WECHATPAY_MCHID)', async () => {
      const account = { WECHAT_APP_ID: 'wx_real_account_1', WECHAT_APP_SECRET: 'real-secret', WECHAT_TOKEN: 'real-token' }
      const plans = JSON.stringify([{ id: 'month', description: '30 days', amount_fen: 1990, grant: { type: 'time', days: 30 } }])
      const failed = spawnScript(script, { ...cleanEnv(), PORT: '0', SCANAUTH_STORE: 'memory', ...account, SCANAUTH_PLANS: plans })
      await expect(failed).rejects.toThrow(
        /\nscanauth example failed to start: WECHAT_APP_ID is a real Official Account but WECHATPAY_MCHID is unset: the WeChat Pay emulator would take the payments, and POST \/demo\/pay would pay any order for nothing\. Set WECHATPAY_MCHID \(real WeChat Pay\), unset SCANAUTH_PLANS \(no payments\), or set SCANAUTH_DEMO=1 \(a demo; never in production\)\n/,
      )
    })

    it('exits 1 at start, naming the variables, for a WeChat Pay merchant half configured', async () => {
      const failed = spawnScript(script, { ...cleanEnv(), PORT: '0', SCANAUTH_STORE: 'memory', WECHATPAY_MCHID: '1230000109', WECHATPAY_API_V3_KEY: 'k'.repeat(32) })
      await expect(failed).rejects.toThrow(
        'scanauth example failed to start: with WECHATPAY_MCHID set, WeChat Pay is real: WECHATPAY_APPID (or WECHAT_APP_ID with a real Official Account), WECHATPAY_PRIVATE_KEY_FILE, WECHATPAY_CERT_SERIAL, WECHATPAY_PUBLIC_KEY_FILE, WECHATPAY_PUBLIC_KEY_ID must be set too',
      )
    })
  })
}

/**
 * This process's environment without the variables the example reads, so the test sets them alone,
 * and without those of an npm running this test (`npm test`): the npm started here sees a shell's.
 */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { npm_config_update_notifier: 'false' }
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^(WECHAT_|WECHATPAY_|SCANAUTH_|REDIS_URL$|DATABASE_URL$|PORT$|HOST$|npm_)/i.test(key)) env[key] = value
  }
  return env
}
