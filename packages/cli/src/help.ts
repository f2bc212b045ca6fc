/**
 * The help texts: `scanauth --help` lists every command; `scanauth <command> --help` describes one.
 *
 * @module
 */
import { GLOBAL_OPTIONS, type OptionSpec } from './args'
import type { AnyCommand } from './command'
import { table } from './format'

const STORE_LINES = [
  'Store (the one your servers use; give at most one of --sqlite, --redis, --postgres):',
  ...table(
    [
      ['--sqlite FILE', 'an SQLite file; never created (SCANAUTH_SQLITE_FILE, default ./data/scanauth.sqlite)'],
      ['--redis URL', 'Redis (REDIS_URL, default redis://127.0.0.1:6379)'],
      ['  --redis-prefix P', 'its key prefix (SCANAUTH_REDIS_PREFIX, default scanauth:)'],
      ['--postgres URL', 'PostgreSQL (DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test)'],
      ['  --pg-schema S', 'its schema (SCANAUTH_PG_SCHEMA, default scanauth)'],
    ],
    '  ',
  ),
  '  Without one, SCANAUTH_STORE (sqlite, the default, redis or postgres) and the variables above name',
  '  the store, as the example servers read them. Options win over variables.',
]

const EXIT_LINES = [
  'Exit status: 0 done; 1 refused or failed (one line on standard error, nothing written);',
  '2 usage or configuration error (one line on standard error, nothing opened).',
]

/** `scanauth --help`. */
export function mainHelp(commands: readonly AnyCommand[]): string[] {
  return [
    'scanauth: look after the users of a scanauth store while your servers use it.',
    '',
    'Usage: scanauth <command> [arguments] [store options] [--json]',
    '',
    'Commands:',
    ...commands.flatMap((c) => [`  ${c.usage}`, `      ${c.summary}`]),
    '',
    ...STORE_LINES,
    '',
    'Options:',
    ...table(
      [
        ['--json', 'print the result as JSON on standard output'],
        ['-h, --help', 'this text; scanauth <command> --help describes one command'],
        ['--version', 'the version of @scanauth/cli'],
      ],
      '  ',
    ),
    '',
    ...EXIT_LINES,
  ]
}

/** `scanauth <command> --help`. */
export function commandHelp(command: AnyCommand): string[] {
  const own = Object.entries(command.options as Record<string, OptionSpec>).map(([name, spec]) => [optionLabel(name, spec), spec.help])
  return [
    `Usage: scanauth ${command.usage} [store options] [--json]`,
    '',
    ...command.help,
    '',
    ...(own.length === 0 ? [] : ['Options:', ...table(own, '  '), '']),
    ...STORE_LINES,
    '',
    ...table(
      [
        [optionLabel('json', GLOBAL_OPTIONS.json), GLOBAL_OPTIONS.json.help],
        ['-h, --help', 'this text'],
      ],
      '',
    ).map((l) => `  ${l}`),
    '',
    'Examples:',
    ...command.examples.map((e) => `  ${e}`),
    '',
    ...EXIT_LINES,
  ]
}

function optionLabel(name: string, spec: OptionSpec): string {
  return spec.value === undefined ? `--${name}` : `--${name} ${spec.value}`
}
