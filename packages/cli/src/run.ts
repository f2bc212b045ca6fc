/**
 * One run of the command line: read the line, check it, find the store, run the command, print.
 * Every failure ends as one line on standard error and an exit status; nothing is written to the
 * store before the line and the store have been checked.
 *
 * @module
 */
import { ScanAuthError } from '@scanauth/core'
import { firstLook, readCommandLine, GLOBAL_OPTIONS, type OptionSpec } from './args'
import { contextFor, type AnyCommand } from './command'
import { grantCommand } from './commands/grant'
import { ledgerCommand } from './commands/ledger'
import { migrateCommand } from './commands/migrate'
import { ordersCommand } from './commands/orders'
import { purgeCommand } from './commands/purge'
import { remindersCommand } from './commands/reminders'
import { revokeCommand } from './commands/revoke'
import { signoutCommand } from './commands/signout'
import { userCommand } from './commands/user'
import { ScanAuthCliError, reasonOf } from './errors'
import { commandHelp, mainHelp } from './help'
import { storeConfig } from './store-config'
import { VERSION } from './version'

/** Every command, in the order `scanauth --help` lists them. */
export const COMMANDS: readonly AnyCommand[] = [
  userCommand,
  grantCommand,
  revokeCommand,
  signoutCommand,
  ledgerCommand,
  ordersCommand,
  purgeCommand,
  remindersCommand,
  migrateCommand,
]

/** Where a run reads and writes; the process's own by default. */
export interface CliIo {
  /** Receives standard output, in chunks. */
  stdout(text: string): void
  /** Receives standard error: one line on failure, nothing otherwise. */
  stderr(text: string): void
  /** The environment the store variables (and `scanauth reminders`' WeChat variables) are read from. */
  env: Record<string, string | undefined>
  /** The clock, in epoch milliseconds (the time of grants, revocations, sign-outs, purges and reminder passes). */
  now(): number
}

/**
 * Runs the command line `argv` (without `node` and the script: `process.argv.slice(2)`) and
 * resolves with the exit status: 0 done, 1 refused or failed, 2 usage or configuration error. It
 * never rejects; a failure is reported as one line on `stderr`.
 *
 * @example
 * ```ts
 * import { runCli } from '@scanauth/cli'
 *
 * const status = await runCli(['user', 'o6_bmjrPTlm6_2sgVt7hMZOPfL2M', '--json', '--sqlite', './data/scanauth.sqlite'])
 * ```
 */
export async function runCli(argv: readonly string[], io: Partial<CliIo> = {}): Promise<number> {
  const out = io.stdout ?? ((text: string) => void process.stdout.write(text))
  const err = io.stderr ?? ((text: string) => void process.stderr.write(text))
  const env = io.env ?? process.env
  const now = io.now ?? Date.now
  const args = [...argv]
  try {
    const look = firstLook(args, everyOption())
    if (look.kind === 'version') {
      out(`${VERSION}\n`)
      return 0
    }
    if (look.kind === 'help' && look.command === undefined) {
      out(`${mainHelp(COMMANDS).join('\n')}\n`)
      return 0
    }
    const name = look.command as string
    const command = COMMANDS.find((c) => c.name === name)
    if (command === undefined) {
      throw new ScanAuthCliError('usage', `unknown command ${JSON.stringify(name)}; the commands are ${COMMANDS.map((c) => c.name).join(', ')} (see scanauth --help)`)
    }
    if (look.kind === 'help') {
      out(`${commandHelp(command).join('\n')}\n`)
      return 0
    }
    const line = readCommandLine(args, command.name, command.options)
    const input = command.parse(line)
    const config = storeConfig(line.store, env)
    const output = await command.run(input, contextFor(config, now, env))
    out(line.json ? `${JSON.stringify(output.json, null, 2)}\n` : `${output.text.join('\n')}\n`)
    return 0
  } catch (error) {
    const failure = asCliError(error)
    err(`scanauth: ${failure.message}\n`)
    return failure.exitStatus
  }
}

/** Every option of every command, so that the first look never takes an option's value for the command. */
function everyOption(): Record<string, OptionSpec> {
  return Object.assign({}, GLOBAL_OPTIONS, ...COMMANDS.map((c) => c.options)) as Record<string, OptionSpec>
}

/** Any failure as a {@link ScanAuthCliError}: core's refusals keep their code in the message. */
function asCliError(error: unknown): ScanAuthCliError {
  if (error instanceof ScanAuthCliError) return error
  if (error instanceof ScanAuthError) {
    if (error.code === 'authorization_not_found' || error.code === 'user_not_found') return new ScanAuthCliError(error.code, error.message, { cause: error })
    return new ScanAuthCliError('refused', `refused (${error.code}): ${error.message}; nothing was changed`, { cause: error })
  }
  return new ScanAuthCliError('store_failed', `the store failed: ${reasonOf(error)}`, { cause: error })
}
