/**
 * `@scanauth/cli`: the `scanauth` command line for operators, and the same as a function.
 *
 * ```sh
 * npx scanauth user o6_bmjrPTlm6_2sgVt7hMZOPfL2M --sqlite ./data/scanauth.sqlite
 * ```
 *
 * Every command runs through `createScanAuth` over the store the servers use, so the rules and the
 * commit protocol are theirs: safe while they run; `scanauth reminders` sends through the Official
 * Account with the servers' variables. See the README for the commands.
 *
 * @packageDocumentation
 */
export { runCli, type CliIo } from './run'
export { ScanAuthCliError, EXIT_STATUS, type ScanAuthCliErrorCode } from './errors'
export type { UserOutput } from './commands/user'
export type { GrantOutput } from './commands/grant'
export type { RevokeOutput } from './commands/revoke'
export type { SignoutOutput } from './commands/signout'
export type { LedgerOutput } from './commands/ledger'
export type { OrdersOutput, OrderOutput, UnmatchedGrant } from './commands/orders'
export type { RemindersOutput, ReminderProblem } from './commands/reminders'
export type { MigrateOutput } from './commands/migrate'
export type { SessionView } from './format'
