/**
 * Boots an example server exactly as `npm start` / `npm run start:koa` does: the command of the root
 * package.json script, with tsx from the repository, but in a fresh temporary working folder (so the
 * default SQLite file `./data/scanauth.sqlite` lands there) and with `PORT=0`. Reads the address from
 * the log, uses the page and the whole flow, then sends SIGTERM and expects a clean exit.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { fetchJson, postJson } from '@scanauth/testkit'
import { TEST_DATABASE_URL, testDatabase } from './postgres-support'

const ROOT = fileURLToPath(new URL('../../../', import.meta.url))

interface Spawned {
  child: ChildProcess
  url: string
  output(): string
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

/** Runs the root package.json script `script` in `cwd` and waits for its "listening on" line. */
async function spawnScript(script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<Spawned> {
  const command = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts[script]
  if (command === undefined) throw new Error(`no script "${script}" in package.json`)
  const [bin, ...args] = command.split(/\s+/)
  // npm runs the script from the root with node_modules/.bin on PATH; from another folder, the same
  // binary and the script's path made absolute.
  const child = spawn(join(ROOT, 'node_modules', '.bin', bin as string), args.map((a) => (a.startsWith('-') ? a : resolve(ROOT, a))), {
    cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // its own process group, so cleanup can reach tsx's child too
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

/** Registers the suite that boots the root script `script` (`start` or `start:koa`) of `framework`'s example. */
export function describeNpmStart(script: 'start' | 'start:koa', framework: 'express' | 'koa'): void {
  let spawned: Spawned | undefined
  let cwd: string | undefined
  const database = testDatabase()
  afterAll(() => database.end())
  afterEach(async () => {
    const child = spawned?.child
    if (child?.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      process.kill(-child.pid, 'SIGKILL') // the test failed before its SIGTERM: end the group we started
      await spawned?.exited
    }
    spawned = undefined
    if (cwd) rmSync(cwd, { recursive: true, force: true })
    await database.cleanup()
  })

  describe(`npm run ${script}`, () => {
    it('starts with SQLite and the emulator on a fresh machine, serves the page and the flow, and stops on SIGTERM', async () => {
      cwd = mkdtempSync(join(tmpdir(), `scanauth-npm-${framework}-`))
      spawned = await spawnScript(script, cwd, { ...cleanEnv(), PORT: '0', SCANAUTH_STORE: 'sqlite' })
      const { url } = spawned
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/) // this machine only, without HOST
      expect(spawned.output()).toContain(`scanauth example (${framework}): store sqlite`)

      const page = await fetch(`${url}/`)
      expect(await page.text()).toContain('Sign in with WeChat')
      expect((await fetchJson(`${url}/demo/config`)).body).toEqual({ framework, store: 'sqlite', emulator: true, pay_emulator: true, confirm: 'scan' })
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

      spawned.child.kill('SIGTERM')
      expect(await spawned.exited).toEqual({ code: 0, signal: null })
      expect(spawned.output()).toContain('SIGTERM: shutting down')
      expect(spawned.output()).toContain('stopped')
      expect(existsSync(join(cwd, 'data', 'scanauth.sqlite'))).toBe(true)
      expect(spawned.output()).toContain(`scan ${scene} by phone-npm: authorized`)
    })

    it('starts on PostgreSQL from DATABASE_URL and SCANAUTH_PG_SCHEMA, migrating the schema, and stops on SIGTERM', async () => {
      cwd = mkdtempSync(join(tmpdir(), `scanauth-npm-${framework}-`))
      const schema = database.schema()
      spawned = await spawnScript(script, cwd, { ...cleanEnv(), PORT: '0', SCANAUTH_STORE: 'postgres', DATABASE_URL: TEST_DATABASE_URL, SCANAUTH_PG_SCHEMA: schema })
      const { url } = spawned
      expect(spawned.output()).toContain(`scanauth example (${framework}): store postgres postgres://`)
      expect(spawned.output()).toContain(`(schema ${schema})`)
      expect((await fetchJson(`${url}/demo/config`)).body).toEqual({ framework, store: 'postgres', emulator: true, pay_emulator: true, confirm: 'scan' })

      const scene = (await postJson(`${url}/auth/create_scene`, { device_id: 'npm-start-pg' })).body.scene_str as string
      expect((await postJson(`${url}/demo/emulator-scan`, { scene_str: scene, openid: 'phone-npm-pg' })).status).toBe(200)
      const polled = await fetchJson(`${url}/auth/status?scene=${scene}`)
      expect(polled.body.status).toBe('authorized')

      spawned.child.kill('SIGTERM')
      expect(await spawned.exited).toEqual({ code: 0, signal: null })
      expect(spawned.output()).toContain('stopped')
      const sessions = await database.pool.query(`SELECT token, device_id FROM "${schema}".scanauth_sessions`)
      expect(sessions.rows).toEqual([{ token: polled.body.session_token, device_id: 'npm-start-pg' }])
    })

    it('exits 1 naming the SQLite file it cannot open and the variable that set it', async () => {
      cwd = mkdtempSync(join(tmpdir(), `scanauth-npm-${framework}-`))
      const folder = join(cwd, 'not-a-file') // a folder where the database file should be
      mkdirSync(folder)
      const failed = spawnScript(script, cwd, { ...cleanEnv(), PORT: '0', SCANAUTH_STORE: 'sqlite', SCANAUTH_SQLITE_FILE: folder })
      await expect(failed).rejects.toThrow(`${script} exited (1) before listening`)
      await expect(failed).rejects.toThrow(`scanauth example failed to start: cannot open the SQLite file ${folder} (SCANAUTH_SQLITE_FILE): `)
    })

    it('exits 1 saying to set PORT when the port is taken', async () => {
      cwd = mkdtempSync(join(tmpdir(), `scanauth-npm-${framework}-`))
      const taken = createServer()
      await new Promise<void>((ok) => taken.listen(0, '127.0.0.1', ok))
      try {
        const { port } = taken.address() as AddressInfo
        const failed = spawnScript(script, cwd, { ...cleanEnv(), PORT: String(port), SCANAUTH_STORE: 'memory' })
        await expect(failed).rejects.toThrow(`scanauth example failed to start: port ${port} on 127.0.0.1 is already in use: set PORT to another port (PORT=0 picks a free one)`)
      } finally {
        await new Promise((ok) => taken.close(ok))
      }
    })

    it('exits 1 at start, naming the variable, for a scene lifetime core would refuse', async () => {
      cwd = mkdtempSync(join(tmpdir(), `scanauth-npm-${framework}-`))
      const failed = spawnScript(script, cwd, { ...cleanEnv(), PORT: '0', SCANAUTH_STORE: 'memory', SCANAUTH_SCENE_TTL_SECONDS: '0' })
      await expect(failed).rejects.toThrow('scanauth example failed to start: SCANAUTH_SCENE_TTL_SECONDS must be an integer from 1 to 2592000, not "0"')
    })

    it('exits 1 at start, naming the variables, for a WeChat Pay merchant half configured', async () => {
      cwd = mkdtempSync(join(tmpdir(), `scanauth-npm-${framework}-`))
      const failed = spawnScript(script, cwd, { ...cleanEnv(), PORT: '0', SCANAUTH_STORE: 'memory', WECHATPAY_MCHID: '1230000109', WECHATPAY_API_V3_KEY: 'k'.repeat(32) })
      await expect(failed).rejects.toThrow(
        'scanauth example failed to start: with WECHATPAY_MCHID set, WeChat Pay is real: WECHATPAY_APPID (or WECHAT_APP_ID with a real Official Account), WECHATPAY_PRIVATE_KEY_FILE, WECHATPAY_CERT_SERIAL, WECHATPAY_PUBLIC_KEY_FILE, WECHATPAY_PUBLIC_KEY_ID must be set too',
      )
    })
  })
}

/** This process's environment without the variables the example reads, so the test sets them alone. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^(WECHAT_|WECHATPAY_|SCANAUTH_|REDIS_URL$|DATABASE_URL$|PORT$|HOST$)/.test(key)) env[key] = value
  }
  return env
}
