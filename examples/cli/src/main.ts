/**
 * `npm run login`: the terminal sign-in against the running example server (`SCANAUTH_URL`, default
 * `http://127.0.0.1:3000/auth`). Ctrl-C aborts the client's wait (its requests end at once) and exits
 * 130. See `login.ts` for what it prints.
 */
import { DEFAULT_URL, defaultDeviceId, EXIT, login, USAGE } from './login'

const args = process.argv.slice(2)
const known = new Set(['--compact', '--no-color', '--help', '-h'])
const unknown = args.filter((arg) => !known.has(arg))
if (args.includes('--help') || args.includes('-h') || unknown.length > 0) {
  if (unknown.length > 0) process.stderr.write(`Unknown option ${unknown.join(' ')}\n\n`)
  process.stderr.write(USAGE)
  process.exit(unknown.length > 0 ? EXIT.usage : 0)
}

// Colours unless asked not to (NO_COLOR, https://no-color.org) or writing to a file or a pipe;
// FORCE_COLOR keeps them for a pipe.
const noColor = args.includes('--no-color') || (process.env.NO_COLOR ?? '') !== ''
const color = !noColor && (process.stdout.isTTY === true || (process.env.FORCE_COLOR ?? '') !== '')

const controller = new AbortController()
// The first Ctrl-C cancels (the abort settles the sign-in at once). Ctrl-C reaches npm, tsx and this
// process together, and tsx passes it on too: a repeat within a second is that echo; a later one
// means "stop now".
let cancelledAt: number | undefined
const cancel = () => {
  if (cancelledAt === undefined) {
    cancelledAt = Date.now()
    controller.abort()
  } else if (Date.now() - cancelledAt > 1000) process.exit(EXIT.aborted)
}
process.on('SIGINT', cancel)
process.on('SIGTERM', cancel)

const code = await login({
  baseUrl: process.env.SCANAUTH_URL || DEFAULT_URL,
  deviceId: process.env.SCANAUTH_DEVICE_ID || defaultDeviceId(),
  out: process.stdout,
  color,
  compact: args.includes('--compact'),
  signal: controller.signal,
})
process.exitCode = code
// Done: a keep-alive socket of the client's fetch must not hold the terminal for its idle timeout.
setTimeout(() => process.exit(code), 200).unref()
