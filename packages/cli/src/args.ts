/**
 * The command line, read with `node:util` `parseArgs`: the command, its arguments and options, the
 * store options and `--json`, anywhere on the line. Everything wrong with it is a `usage` error
 * (exit status 2), found before any store is opened.
 *
 * @module
 */
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { ScanAuthCliError, oneLine } from './errors'
import type { StoreFlags } from './store-config'

/** How an option is given: a value (`--days 30`) or a switch (`--json`). */
export interface OptionSpec {
  /** `string` takes a value, `boolean` is a switch. */
  type: 'string' | 'boolean'
  /** The value's name in help texts, e.g. `N`. */
  value?: string
  /** One line of help. */
  help: string
  /** A one-letter alias. */
  short?: string
}

/** The options every command takes: where the store is, `--json` and `--help`. */
export const GLOBAL_OPTIONS = {
  sqlite: { type: 'string', value: 'FILE', help: 'the SQLite file of the store (SCANAUTH_SQLITE_FILE; default ./data/scanauth.sqlite)' },
  redis: { type: 'string', value: 'URL', help: 'the Redis server of the store (REDIS_URL; default redis://127.0.0.1:6379)' },
  'redis-prefix': { type: 'string', value: 'P', help: "the store's key prefix on Redis (SCANAUTH_REDIS_PREFIX; default scanauth:)" },
  postgres: { type: 'string', value: 'URL', help: 'the PostgreSQL database of the store (DATABASE_URL; default postgres://postgres@127.0.0.1:5432/test)' },
  'pg-schema': { type: 'string', value: 'S', help: "the store's schema in PostgreSQL (SCANAUTH_PG_SCHEMA; default scanauth)" },
  json: { type: 'boolean', help: 'print the result as JSON on standard output' },
  help: { type: 'boolean', short: 'h', help: 'print help' },
} as const satisfies Record<string, OptionSpec>

/** What a command line says, once read. */
export interface CommandLine {
  /** The command's options (its own and the global ones), by name. */
  values: Record<string, string | boolean | undefined>
  /** The command's arguments (after the command's name). */
  positionals: string[]
  /** The store options. */
  store: StoreFlags
  /** `--json` was given. */
  json: boolean
}

/** What the line asks for before a command runs: help, the version, or a command. */
export type FirstLook = { kind: 'help'; command?: string } | { kind: 'version' } | { kind: 'command'; command: string }

/**
 * Finds the command's name: the first argument that is not an option or an option's value. Every
 * option of every command is known here, so a value such as `--days 30` is never taken for it.
 */
export function firstLook(argv: string[], everyOption: Record<string, OptionSpec>): FirstLook {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { ...toParseArgs(everyOption), version: { type: 'boolean' } },
    strict: false,
    allowPositionals: true,
  })
  const command = positionals[0]
  if (values.help === true) return command === undefined ? { kind: 'help' } : { kind: 'help', command }
  if (command === undefined) {
    if (values.version === true) return { kind: 'version' }
    throw new ScanAuthCliError('usage', 'no command given (see scanauth --help)')
  }
  return { kind: 'command', command }
}

/** Reads the line strictly for `command` with its options: an unknown, repeated or malformed option is a usage error. */
export function readCommandLine(argv: string[], command: string, options: Record<string, OptionSpec>): CommandLine {
  const all = { ...GLOBAL_OPTIONS, ...options }
  let parsed: { values: Record<string, unknown>; positionals: string[]; tokens: Array<{ kind: string; name?: string }> }
  try {
    parsed = parseArgs({ args: argv, options: toParseArgs(all), strict: true, allowPositionals: true, tokens: true })
  } catch (error) {
    throw new ScanAuthCliError('usage', `${parseArgsMessage(error)} (see scanauth ${command} --help)`)
  }
  const seen = new Set<string>()
  for (const token of parsed.tokens) {
    if (token.kind !== 'option' || token.name === undefined) continue
    if (seen.has(token.name)) throw new ScanAuthCliError('usage', `--${token.name} is given more than once (see scanauth ${command} --help)`)
    seen.add(token.name)
  }
  const values = parsed.values as Record<string, string | boolean | undefined>
  const text = (name: string) => (typeof values[name] === 'string' ? (values[name] as string) : undefined)
  return {
    values,
    positionals: parsed.positionals.slice(1),
    store: {
      sqlite: text('sqlite'),
      redis: text('redis'),
      redisPrefix: text('redis-prefix'),
      postgres: text('postgres'),
      pgSchema: text('pg-schema'),
    },
    json: values.json === true,
  }
}

function toParseArgs(options: Record<string, OptionSpec>): NonNullable<ParseArgsConfig['options']> {
  return Object.fromEntries(Object.entries(options).map(([name, spec]) => [name, spec.short === undefined ? { type: spec.type } : { type: spec.type, short: spec.short }]))
}

/** parseArgs' complaint in our words, on one line. */
function parseArgsMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  const code = (error as { code?: unknown }).code
  const option = /'(-{1,2}[^' ]+)/.exec(message)?.[1]
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && option !== undefined) return `unknown option ${option}`
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && option !== undefined) {
    return /does not take an argument/.test(message) ? `${option} takes no value` : `${option} needs a value`
  }
  return oneLine(message)
}

/** The argument count a command takes: exactly these names, in this order. */
export function expectPositionals(command: string, positionals: string[], names: string[]): string[] {
  if (positionals.length < names.length) {
    throw new ScanAuthCliError('usage', `${command} needs ${names.slice(positionals.length).map((n) => `<${n}>`).join(' ')} (see scanauth ${command} --help)`)
  }
  if (positionals.length > names.length) {
    const extra = positionals.slice(names.length).map((p) => JSON.stringify(p)).join(' ')
    throw new ScanAuthCliError('usage', `${command} takes ${names.length === 0 ? 'no arguments' : names.map((n) => `<${n}>`).join(' ')}, not also ${extra} (see scanauth ${command} --help)`)
  }
  return positionals
}

// eslint-disable-next-line no-control-regex -- the C0 and C1 controls core refuses (D-identifiers)
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/

/**
 * An identifier as core takes it (docs/behaviour.md, D-identifiers, D-well-formed): 1 to 128
 * characters (code points), no control characters, no lone surrogates. Checked here so that the
 * command stops with a usage error before it opens the store.
 */
export function identifierArg(command: string, what: string, value: string): string {
  const length = [...value].length
  const fault =
    length === 0
      ? 'must not be empty'
      : length > 128
        ? `must be at most 128 characters, not ${length}`
        : CONTROL.test(value)
          ? 'must not contain control characters'
          : !(value as string & { isWellFormed(): boolean }).isWellFormed()
            ? 'must be well-formed Unicode (no lone surrogates)'
            : null
  if (fault !== null) throw new ScanAuthCliError('usage', `${what} ${fault} (see scanauth ${command} --help)`)
  return value
}

/** A whole number from `min` to `max`, written in plain decimal digits (no sign, fraction, exponent or hex). */
export function integerArg(command: string, what: string, value: string, min: number, max: number): number {
  const n = Number(value)
  if (!/^\d+$/.test(value) || n < min || n > max) {
    throw new ScanAuthCliError('usage', `${what} must be a whole number from ${min} to ${max}, not ${JSON.stringify(value)} (see scanauth ${command} --help)`)
  }
  return n
}

/** A free text of 1 to `max` characters without control characters (a revocation's reason). */
export function textArg(command: string, what: string, value: string, max: number): string {
  const length = [...value].length
  if (length === 0 || length > max || CONTROL.test(value) || !(value as string & { isWellFormed(): boolean }).isWellFormed()) {
    throw new ScanAuthCliError('usage', `${what} must be 1 to ${max} characters without control characters (see scanauth ${command} --help)`)
  }
  return value
}
