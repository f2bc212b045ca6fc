/**
 * The version of this package, from its package.json (the build inlines it).
 *
 * @module
 */
import { version } from '../package.json'

/** The version of `@scanauth/cli`. */
export const VERSION: string = version
