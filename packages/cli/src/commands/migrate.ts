/**
 * `scanauth migrate`: brings an SQLite file or a PostgreSQL schema up to the schema version of this
 * release's store packages.
 *
 * @module
 */
import { expectPositionals } from '../args'
import type { Command } from '../command'
import { migrateStore } from '../open-store'

/** The JSON of `migrate`. */
export interface MigrateOutput {
  /** `sqlite`, `redis` or `postgres`. */
  store: 'sqlite' | 'redis' | 'postgres'
  /** The schema version found; null on Redis, which has no schema. */
  from: number | null
  /** The schema version now; null on Redis. */
  to: number | null
  /** Whether a migration ran. */
  migrated: boolean
}

export const migrateCommand: Command<Record<string, never>> = {
  name: 'migrate',
  usage: 'migrate',
  summary: 'bring an SQLite file or a PostgreSQL schema up to date and say its version',
  help: [
    "Migrates the store's tables to the schema version of this release, as a server of this release does",
    'when it starts, and says the version before and after. SQLite: the file must exist (the CLI never',
    'creates one); the migration runs in one BEGIN IMMEDIATE transaction. PostgreSQL: the schema and its',
    'tables are created when missing; the migration runs in one transaction under an advisory lock. Both are',
    'safe while servers use the store. Redis keeps no schema: there is nothing to migrate.',
  ],
  options: {},
  examples: ['scanauth migrate --sqlite /srv/app/data/scanauth.sqlite', 'scanauth migrate --postgres postgres://app@db/app --pg-schema auth'],
  parse(line) {
    expectPositionals('migrate', line.positionals, [])
    return {}
  },
  async run(_input, context) {
    const report = await migrateStore(context.config)
    const output: MigrateOutput = { store: report.kind, from: report.from, to: report.to, migrated: report.migrated }
    let text: string
    if (report.kind === 'redis') text = `${report.label}: nothing to migrate (Redis keeps no schema)`
    else if (report.migrated) text = `${report.label}: migrated from schema version ${report.from} to ${report.to}`
    else text = `${report.label}: at schema version ${report.to}, nothing to migrate`
    return { json: output, text: [text] }
  },
}
