/**
 * The shape of one migration, in a module of its own so that `schema.ts` (the list) and the
 * migrations kept in files of their own (`migration-7.ts`) both import it and neither imports the other.
 *
 * @module
 */

/** One step of the schema's history. */
export interface Migration {
  /** 1, 2, 3, ...: the schema version the file has once this step is applied. */
  version: number
  /** What the step does, recorded in the version table. */
  name: string
  /** The statements of the step, run in the same transaction as its version row. */
  sql: string
}
