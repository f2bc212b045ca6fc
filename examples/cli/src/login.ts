/**
 * The terminal sign-in: asks a scanauth server for a code through `@scanauth/client`, draws it in
 * the terminal with the URL under it, waits for the scan (redrawing the code when it is refreshed),
 * and prints the outcome: authorized (until when, or the points left), or a purchase needed (the
 * plans and how to buy). `main.ts` runs it for `npm run login`; tests run it with an output of their own.
 *
 * @module
 */
import { createHash } from 'node:crypto'
import { hostname, userInfo } from 'node:os'
import { createScanAuthClient, ScanAuthClientError, type AuthorizationSummary, type Plan, type SceneCode } from '@scanauth/client'
import { terminalQr } from './terminal-qr'

/** Where the demo server's scanauth routes are when `SCANAUTH_URL` is not set. */
export const DEFAULT_URL = 'http://127.0.0.1:3000/auth'

/** Expired codes replaced without asking before the sign-in gives up (the client's default). */
const MAX_REFRESHES = 3

/** The exit codes of `npm run login`. */
export const EXIT = {
  /** Signed in. */
  authorized: 0,
  /** Something failed: the server, the network, the code expired after its refreshes, a rate limit. */
  failed: 1,
  /** Bad arguments. */
  usage: 2,
  /** The scan worked, but the user has no authorization: nothing to sign in with until a purchase. */
  needPurchase: 3,
  /** The person who scanned denied the sign-in on the phone (the server's confirm-on-phone mode). */
  denied: 4,
  /** Ctrl-C (128 + SIGINT, as shells report it). */
  aborted: 130,
} as const

/** Where the sign-in writes: a terminal (`process.stdout`) or anything with `write`. */
export interface Output {
  write(text: string): unknown
  /** A terminal: the code is redrawn in place when it is refreshed. */
  isTTY?: boolean
  /** The terminal's height, to know whether a code can be redrawn in place. */
  rows?: number
  /** The terminal's width: a longer line takes more than one row, which a redraw in place must count. */
  columns?: number
}

/** What {@link login} needs. */
export interface LoginOptions {
  /** The server's scanauth mount, e.g. `http://127.0.0.1:3000/auth`. */
  baseUrl: string
  /** This device's label for the server (it rate-limits per device). */
  deviceId: string
  out: Output
  /** Draw with colours (see terminal-qr.ts); false draws glyphs on the terminal's own colours. */
  color: boolean
  /** Two module rows per line instead of one. */
  compact: boolean
  /** Ctrl-C: aborts the wait. */
  signal: AbortSignal
  /** The `fetch` the client uses (tests may pass one; default the global). */
  fetch?: typeof fetch
}

/** The usage text of `npm run login -- --help`. */
export const USAGE = `Usage: npm run login [-- --compact] [--no-color]

Signs this terminal in at a scanauth server (SCANAUTH_URL, default ${DEFAULT_URL}):
draws the code to scan with WeChat, waits, and prints the outcome. Ctrl-C cancels.

  --compact    two rows of the code per line (smaller; gaps in some terminals)
  --no-color   draw without colours (also NO_COLOR=1); right on light themes only

Exit status: 0 signed in, 3 purchase needed, 1 failed, 130 cancelled.
`

/** A stable id for this machine and user, without saying who they are (at most 128 characters, as the server asks). */
export function defaultDeviceId(): string {
  let user = ''
  try {
    user = userInfo().username
  } catch {
    // no user entry (some containers): the host alone
  }
  return `cli-${createHash('sha256').update(`${hostname()}\0${user}`).digest('hex').slice(0, 16)}`
}

/** A date and time for the terminal, in the local time zone, e.g. "2026-12-03 14:05 (local time)". */
export function formatDate(iso: string): string {
  const at = new Date(iso)
  if (Number.isNaN(at.getTime())) return iso
  const pad = (n: number) => String(n).padStart(2, '0')
  return `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())} ${pad(at.getHours())}:${pad(at.getMinutes())}`
}

/** 1990 → "¥19.90", in whole numbers (a fen is never rounded away). */
export function formatFen(fen: number): string {
  return `¥${Math.floor(fen / 100)}.${String(fen % 100).padStart(2, '0')}`
}

/** "Time pass · 30 days", "Points · 100 points". */
function grantText(plan: Plan): string {
  if (plan.grant.type === 'points') return `Points · ${plan.grant.points} ${plan.grant.points === 1 ? 'point' : 'points'}`
  const { days } = plan.grant
  if (Number.isInteger(days)) return `Time pass · ${days} ${days === 1 ? 'day' : 'days'}`
  const hours = Math.round(days * 240) / 10
  return `Time pass · ${hours} ${hours === 1 ? 'hour' : 'hours'}`
}

/** The lines that describe an authorization. */
function authorizationLines(a: AuthorizationSummary): string[] {
  if (a.type === 'points') return [`  Points left  ${a.remainingPoints}`]
  return [`  Time pass    valid until ${a.endAt === null ? '—' : formatDate(a.endAt)}`]
}

/** Where WeChat serves the images of its codes; any other `showqrcode` is an emulator's. */
const WECHAT_IMAGE_HOST = 'mp.weixin.qq.com'
const SHOW_QR_PATH = '/cgi-bin/showqrcode'

/**
 * The one command that scans `code` with the WeChat emulator, or null when the emulator did not
 * make it. The emulator made a code whose image is its own `showqrcode` (WeChat's are served from
 * mp.weixin.qq.com); its `POST /emulator/scan` takes the scene (and scans its newest live code) and,
 * without an openid, scans as the emulator's own phone user, as its page does (docs/getting-started.md).
 */
export function emulatorScanCommand(code: Pick<SceneCode, 'sceneStr' | 'qrUrl'>): string | null {
  let image: URL
  try {
    image = new URL(code.qrUrl)
  } catch {
    return null
  }
  if (image.hostname === WECHAT_IMAGE_HOST || !image.pathname.endsWith(SHOW_QR_PATH)) return null
  // Inside single quotes for the shell: a scene_str of scanauth's never holds a quote, another server's might.
  if (code.sceneStr.includes("'")) return null
  const emulator = `${image.origin}${image.pathname.slice(0, -SHOW_QR_PATH.length)}`
  return `curl -X POST ${emulator}/emulator/scan -H 'content-type: application/json' -d '${JSON.stringify({ scene_str: code.sceneStr })}'`
}

/** The terminal rows a line takes: one, or more where it is wider than the terminal (colours take no room). */
function rowsOf(line: string, columns: number | undefined): number {
  // eslint-disable-next-line no-control-regex
  const width = line.replace(/\x1b\[[0-9;]*m/g, '').length
  return columns === undefined || columns < 1 ? 1 : Math.max(1, Math.ceil(width / columns))
}

/** "abc123…wxyz": enough to recognise a token, not enough to use it. */
function abbreviate(token: string): string {
  return token.length <= 12 ? token : `${token.slice(0, 6)}…${token.slice(-4)}`
}

/** Signs in and prints it all; resolves with the exit code (see {@link EXIT}). */
export async function login(options: LoginOptions): Promise<number> {
  const { out, signal } = options
  const print = (line = '') => out.write(`${line}\n`)
  const client = createScanAuthClient({ baseUrl: options.baseUrl, ...(options.fetch ? { fetch: options.fetch } : {}) })
  /** Terminal rows written since the current code was drawn, to redraw it in place. */
  let drawn = 0

  const onCode = (code: SceneCode) => {
    const lines: string[] = []
    if (code.refresh > 0) lines.push(`The code expired; here is a new one (${code.refresh} of at most ${MAX_REFRESHES}).`, '')
    // Without the server's qr_content the client hands the image's address: not what WeChat scans.
    if (code.qrContent === code.qrUrl) lines.push('This server does not say what its code encodes: open the image below and scan it from there.')
    else lines.push(...terminalQr(code.qrContent, { color: options.color, style: options.compact ? 'compact' : 'full' }))
    lines.push('', code.qrContent, '', `Scene ${code.sceneStr}`)
    const scan = emulatorScanCommand(code)
    if (scan !== null) lines.push('The WeChat emulator made this code; to scan it, run in another terminal:', `  ${scan}`)
    lines.push('', `Scan the code with WeChat (valid until ${formatDate(code.expiresAt).slice(11)}). Ctrl-C cancels.`)
    // On a terminal tall enough to hold it, the new code replaces the old one; elsewhere (a pipe,
    // a short window where the old one scrolled away) it is printed below it.
    if (drawn > 0 && out.isTTY && out.rows !== undefined && drawn < out.rows) out.write(`\x1b[${drawn}F\x1b[J`)
    for (const line of lines) print(line)
    drawn = lines.reduce((rows, line) => rows + rowsOf(line, out.columns), 0)
  }

  let announcedScan = false
  try {
    const result = await client.signIn({
      deviceId: options.deviceId,
      signal,
      maxRefreshes: MAX_REFRESHES,
      onCode,
      onStatus: ({ status }) => {
        // With the server's confirm-on-phone mode the phone shows a page first.
        if (status === 'scanned' && !announcedScan) {
          announcedScan = true
          print('Scanned. Confirm on the phone…')
          drawn++
        }
      },
    })
    print()
    if (result.status === 'authorized') {
      print('✓ Authorized: this terminal is signed in.')
      for (const line of authorizationLines(result.authorization)) print(line)
      print(`  Session      ${abbreviate(result.sessionToken)}`)
      return EXIT.authorized
    }
    if (result.status === 'denied') {
      print('✗ Denied on the phone: this terminal was not signed in.')
      return EXIT.denied
    }
    print('! Purchase needed: the scan worked, but this WeChat user has no active authorization (the free trial is used up).')
    await printPlans(client.listPlans(), options, print)
    return EXIT.needPurchase
  } catch (error) {
    print()
    if (error instanceof ScanAuthClientError) {
      if (error.code === 'aborted') {
        print('Cancelled.')
        return EXIT.aborted
      }
      print(`✗ ${failureText(error, options.baseUrl)}`)
      return EXIT.failed
    }
    throw error
  }
}

/** The plans, and how to buy one. */
async function printPlans(plans: Promise<Plan[]>, options: LoginOptions, print: (line?: string) => void): Promise<void> {
  let list: Plan[]
  try {
    list = await plans
  } catch (error) {
    print(`  The plans could not be loaded: ${error instanceof Error ? error.message : String(error)}`)
    return
  }
  if (list.length === 0) {
    print('  This server sells nothing.')
    return
  }
  print('  Plans:')
  const width = Math.max(...list.map((plan) => plan.description.length))
  for (const plan of list) print(`    ${plan.description.padEnd(width)}  ${grantText(plan).padEnd(22)}  ${formatFen(plan.amountFen)}`)
  print(`  To buy one, open ${new URL(options.baseUrl).origin}/ in a browser, scan its code with the same WeChat and choose a plan;`)
  print('  then run `npm run login` again.')
}

/** What went wrong, in words a person can act on. */
function failureText(error: ScanAuthClientError, baseUrl: string): string {
  switch (error.code) {
    case 'expired':
      return 'The code expired without a scan. Run `npm run login` again for a new one.'
    case 'rate_limited':
      return `Too many codes asked for: the server accepts a new one in ${error.retryAfterSeconds ?? '?'} s.`
    case 'network':
      return `Cannot reach the scanauth server at ${baseUrl}: is it running (\`npm start\`)? Set SCANAUTH_URL to its /auth address.`
    default:
      return `The server answered ${error.status ?? 'something unexpected'}${error.detail ? `: ${error.detail}` : ''} (${baseUrl}).`
  }
}
