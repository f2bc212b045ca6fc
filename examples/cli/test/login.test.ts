// `npm run login` against a real example server (Express, the WeChat emulator, a memory store): the
// root script's command in a child process, as a person runs it, scanned by the emulated phone; the
// code it prints reads back as the URL under it; a purchase needed lists the plans; Ctrl-C exits 130.
// In-process (`login()` with an output of the test's), a refreshed code is redrawn in place.
import { execFile, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import QRCode from 'qrcode'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer } from '@scanauth/example-express'
import type { RunningServer } from '@scanauth/example-shared'
import { emulatorScanCommand, EXIT, login } from '../src/login'

const ROOT = fileURLToPath(new URL('../../../', import.meta.url))
/** A free trial of about a minute, so "Purchase needed" comes after moving the clock by 61 s. */
const SHORT_TRIAL_DAYS = 0.0007

let server: RunningServer
const clock = { ahead: 0 }
const logLines: string[] = []
let devices = 0

beforeAll(async () => {
  server = await startServer({
    port: 0,
    host: '127.0.0.1',
    store: { kind: 'memory' },
    wechat: { kind: 'emulator' },
    freeTrialDays: SHORT_TRIAL_DAYS,
    now: () => Date.now() + clock.ahead,
    log: (line) => void logLines.push(line),
  })
})

afterAll(async () => {
  await server?.close()
})

/** A device id of its own per run, so that the per-device rate limit never meets another test. */
const newDevice = () => `cli-test-${process.pid}-${++devices}`

/** The scenes the server created for `deviceId`, oldest first (from its log). */
function scenesOf(deviceId: string): string[] {
  return logLines.flatMap((line) => /scene (pc_[0-9a-f]+) created for device (\S+)/.exec(line) ?? []).filter((_, i, all) => i % 3 === 1 && all[i + 1] === deviceId)
}

/** Runs the root `login` script's command (tsx, from the repository root) with `env`; collects its output. */
function runLogin(env: Record<string, string>, args: string[] = []) {
  const command = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.login as string
  const [bin, ...rest] = command.split(/\s+/)
  const child = spawn(join(ROOT, 'node_modules', '.bin', bin as string), [...rest, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', SCANAUTH_URL: `${server.url}/auth`, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  const waiters: Array<() => void> = []
  const onData = (chunk: Buffer) => {
    output += chunk.toString()
    for (const wake of waiters.splice(0)) wake()
  }
  child.stdout.on('data', onData)
  child.stderr.on('data', onData)
  const exited = new Promise<number | null>((ok) => child.once('close', (code) => ok(code)))
  return {
    child,
    exited,
    output: () => output,
    /** Resolves once the output matches `pattern` (or rejects when the process ends first). */
    async waitFor(pattern: RegExp): Promise<void> {
      let ended = false
      void exited.then(() => {
        ended = true
        for (const wake of waiters.splice(0)) wake()
      })
      while (!pattern.test(output)) {
        if (ended) throw new Error(`login exited before printing ${pattern}:\n${output}`)
        await new Promise<void>((wake) => waiters.push(wake))
      }
    },
  }
}

/** The code drawn in `output` (no colours: `██` dark, spaces light), as rows of booleans: `size` lines from the first dark one. */
function drawnCode(output: string, size: number): boolean[][] {
  const lines = output.split('\n')
  const first = lines.findIndex((line) => line.includes('██'))
  return lines.slice(first, first + size).map((line) => Array.from({ length: (line.length - 8) / 2 }, (_, i) => line.slice(8 + i * 2, 10 + i * 2) === '██'))
}

/** The module rows of the QR code of `text`, as the CLI makes it. */
function codeOf(text: string): boolean[][] {
  const { modules } = QRCode.create(text, { errorCorrectionLevel: 'M' })
  // A drawn line ends at its last dark module (no colours: trailing spaces are trimmed).
  return Array.from({ length: modules.size }, (_, row) => {
    const cells = Array.from({ length: modules.size }, (_, column) => Boolean(modules.get(row, column)))
    return cells.slice(0, cells.lastIndexOf(true) + 1)
  })
}

describe('npm run login', () => {
  it('draws the code with the URL under it, is scanned, and prints "Authorized" with the end date', async () => {
    const deviceId = newDevice()
    const run = runLogin({ SCANAUTH_DEVICE_ID: deviceId })
    await run.waitFor(/Ctrl-C cancels/)
    const [sceneStr] = scenesOf(deviceId)
    expect(sceneStr).toMatch(/^pc_/)

    // The URL under the code is the text the code encodes: the server's qr_content.
    const lines = run.output().split('\n')
    const url = lines.find((line) => /^https?:\/\//.test(line)) as string
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//)
    const code = codeOf(url)
    expect(drawnCode(run.output(), code.length)).toEqual(code)
    // A quiet zone of 4 light rows above the code (no colours: empty lines).
    const first = lines.findIndex((line) => line.includes('██'))
    expect(lines.slice(first - 4, first)).toEqual(['', '', '', ''])

    await server.wiring.emulator!.scan({ sceneStr: sceneStr as string, openid: 'o_cli_signed_in' })
    expect(await run.exited).toBe(EXIT.authorized)
    expect(run.output()).toContain('✓ Authorized: this terminal is signed in.')
    expect(run.output()).toMatch(/Time pass {4}valid until \d{4}-\d{2}-\d{2} \d{2}:\d{2}\n/)
    expect(run.output()).toMatch(/Session {6}\S{6}…\S{4}\n/)
  })

  it('prints the scene and the one command that scans it with the emulator, which signs the terminal in', async () => {
    const deviceId = newDevice()
    const run = runLogin({ SCANAUTH_DEVICE_ID: deviceId })
    await run.waitFor(/Ctrl-C cancels/)
    const [sceneStr] = scenesOf(deviceId)
    const lines = run.output().split('\n')
    expect(lines).toContain(`Scene ${sceneStr}`)
    const intro = lines.indexOf('The WeChat emulator made this code; to scan it, run in another terminal:')
    expect(intro).toBe(lines.indexOf(`Scene ${sceneStr}`) + 1)
    const command = (lines[intro + 1] as string).trim()
    // The emulator of the example server (a port of its own), by the scene, as docs/getting-started.md shows.
    expect(command).toBe(`curl -X POST ${server.wiring.emulator!.url}/emulator/scan -H 'content-type: application/json' -d '{"scene_str":"${sceneStr}"}'`)
    expect(lines.slice(intro + 2, intro + 4)).toEqual(['', expect.stringMatching(/^Scan the code with WeChat \(valid until \d{2}:\d{2}\)\. Ctrl-C cancels\.$/)])

    // Run as printed, from another "terminal": the emulated phone scans and the terminal is signed in.
    // (Not spawnSync: the emulator that answers it runs in this process.)
    const scanned = await new Promise<{ status: number | null; stdout: string }>((resolve, reject) => {
      execFile('sh', ['-c', command], { encoding: 'utf8' }, (error, stdout) => (error !== null && error.code === undefined ? reject(error) : resolve({ status: error?.code === undefined ? 0 : Number(error.code), stdout })))
    })
    expect(scanned.status).toBe(0)
    expect(JSON.parse(scanned.stdout)).toMatchObject({ status: 200, reply: { Content: expect.any(String) } })
    expect(await run.exited).toBe(EXIT.authorized)
    expect(run.output()).toContain('✓ Authorized: this terminal is signed in.')
  })

  it('prints the plans and how to buy when the scan needs a purchase, and exits 3', async () => {
    // The phone's user had the free trial long ago.
    const earlier = await server.wiring.auth.createScene({ deviceId: 'cli-test-earlier' })
    await server.wiring.emulator!.scan({ sceneStr: earlier.sceneStr, openid: 'o_cli_trial_used' })
    clock.ahead += 61_000

    const deviceId = newDevice()
    const run = runLogin({ SCANAUTH_DEVICE_ID: deviceId })
    await run.waitFor(/Ctrl-C cancels/)
    await server.wiring.emulator!.scan({ sceneStr: scenesOf(deviceId)[0] as string, openid: 'o_cli_trial_used' })
    expect(await run.exited).toBe(EXIT.needPurchase)
    const output = run.output()
    expect(output).toContain('! Purchase needed')
    expect(output).toMatch(/30 days of access +Time pass · 30 days +¥19\.90\n/)
    expect(output).toMatch(/100 points +Points · 100 points +¥9\.90\n/)
    expect(output).toContain(`To buy one, open ${server.url}/ in a browser`)
  })

  it('cancels on Ctrl-C: "Cancelled." and exit 130', async () => {
    const deviceId = newDevice()
    const run = runLogin({ SCANAUTH_DEVICE_ID: deviceId })
    await run.waitFor(/Ctrl-C cancels/)
    const sceneStr = scenesOf(deviceId)[0] as string
    run.child.kill('SIGINT')
    expect(await run.exited).toBe(EXIT.aborted)
    expect(run.output()).toMatch(/\nCancelled\.\n$/)
    // Nothing was signed in: the scene is still pending at the server.
    expect(await server.wiring.auth.getStatus(sceneStr)).toEqual({ status: 'pending' })
  })

  it('says where it looked when no server answers', async () => {
    const run = runLogin({ SCANAUTH_URL: 'http://127.0.0.1:9/auth', SCANAUTH_DEVICE_ID: newDevice() })
    expect(await run.exited).toBe(EXIT.failed)
    expect(run.output()).toContain('Cannot reach the scanauth server at http://127.0.0.1:9/auth')
  })
})

describe('the emulator scan command', () => {
  const sceneStr = 'pc_0123456789abcdef0123456789abcdef'
  it('is the emulator scan by scene when the emulator drew the code', () => {
    expect(emulatorScanCommand({ sceneStr, qrUrl: 'http://127.0.0.1:3001/cgi-bin/showqrcode?ticket=gQH%2B8DwAAAAA%3D%3D' })).toBe(
      `curl -X POST http://127.0.0.1:3001/emulator/scan -H 'content-type: application/json' -d '{"scene_str":"${sceneStr}"}'`,
    )
    // An emulator behind a path prefix.
    expect(emulatorScanCommand({ sceneStr, qrUrl: 'https://dev.example.com/wx/cgi-bin/showqrcode?ticket=t' })).toContain(' https://dev.example.com/wx/emulator/scan ')
  })

  it('is absent for WeChat\'s own codes and for anything it cannot quote', () => {
    expect(emulatorScanCommand({ sceneStr, qrUrl: 'https://mp.weixin.qq.com/cgi-bin/showqrcode?ticket=gQH%2B8DwAAAAA%3D%3D' })).toBeNull()
    expect(emulatorScanCommand({ sceneStr, qrUrl: 'https://img.example.com/qr/123.png' })).toBeNull()
    expect(emulatorScanCommand({ sceneStr, qrUrl: 'not a url' })).toBeNull()
    expect(emulatorScanCommand({ sceneStr: "pc_'; rm -rf ~", qrUrl: 'http://127.0.0.1:3001/cgi-bin/showqrcode?ticket=t' })).toBeNull()
  })
})

describe('login() on a terminal', () => {
  it('redraws a refreshed code in place, in colour, then signs in with it', async () => {
    let written = ''
    const out = { isTTY: true, rows: 200, write: (text: string) => void (written += text) }
    const deviceId = newDevice()
    const controller = new AbortController()
    const done = login({ baseUrl: `${server.url}/auth`, deviceId, out, color: true, compact: false, signal: controller.signal })
    await expect.poll(() => scenesOf(deviceId).length).toBe(1)
    await expect.poll(() => written).toContain('Ctrl-C cancels')
    const firstDrawing = written

    // The code expires (the server's clock jumps past it; a status read commits the expiry): the
    // client asks for a new one, which replaces the old drawing.
    clock.ahead += 301_000
    expect(await server.wiring.auth.getStatus(scenesOf(deviceId)[0] as string)).toEqual({ status: 'expired' })
    await expect.poll(() => scenesOf(deviceId).length, { timeout: 20_000 }).toBe(2)
    await expect.poll(() => written.length).toBeGreaterThan(firstDrawing.length + 100)
    await expect.poll(() => written.slice(firstDrawing.length)).toContain('Ctrl-C cancels')
    const redraw = written.slice(firstDrawing.length)
    const drawnLines = firstDrawing.split('\n').length - 1
    expect(redraw.startsWith(`\x1b[${drawnLines}F\x1b[J`)).toBe(true) // back to the old code's first line, cleared below
    expect(redraw).toContain('The code expired; here is a new one (1 of at most 3).')
    expect(redraw).toContain('\x1b[38;5;16m\x1b[48;5;16m██') // black on black…
    expect(redraw).toContain('\x1b[38;5;231m\x1b[48;5;231m  ') // …and white on white: right on any theme

    await server.wiring.emulator!.scan({ sceneStr: scenesOf(deviceId)[1] as string, openid: 'o_cli_terminal' })
    expect(await done).toBe(EXIT.authorized)
    expect(written).toContain('✓ Authorized')
  })

  it('counts the rows of lines wider than the terminal when it redraws', async () => {
    let written = ''
    const columns = 60
    const out = { isTTY: true, rows: 400, columns, write: (text: string) => void (written += text) }
    const deviceId = newDevice()
    const done = login({ baseUrl: `${server.url}/auth`, deviceId, out, color: false, compact: false, signal: new AbortController().signal })
    await expect.poll(() => written).toContain('Ctrl-C cancels')
    const firstDrawing = written
    const lines = firstDrawing.split('\n').slice(0, -1)
    // The scan command is wider than 60 columns: it takes more than one row.
    expect(lines.some((line) => line.length > columns)).toBe(true)
    const rows = lines.reduce((sum, line) => sum + Math.max(1, Math.ceil(line.length / columns)), 0)
    expect(rows).toBeGreaterThan(lines.length)

    clock.ahead += 301_000
    expect(await server.wiring.auth.getStatus(scenesOf(deviceId)[0] as string)).toEqual({ status: 'expired' })
    await expect.poll(() => written.slice(firstDrawing.length), { timeout: 20_000 }).toContain('Ctrl-C cancels')
    expect(written.slice(firstDrawing.length).startsWith(`\x1b[${rows}F\x1b[J`)).toBe(true)

    await server.wiring.emulator!.scan({ sceneStr: scenesOf(deviceId)[1] as string, openid: 'o_cli_narrow_terminal' })
    expect(await done).toBe(EXIT.authorized)
  })
})
