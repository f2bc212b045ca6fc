/**
 * The one error of the example's configuration, in a file of its own so that every reader of the
 * environment (`config.ts`, `pay-config.ts`) can throw it without importing the other.
 *
 * @module
 */

/** A configuration mistake, said in words a person can act on (the message names the variable). */
export class ConfigError extends Error {
  override name = 'ConfigError'
}
