/**
 * The shape of a command: its help, its options, how it reads its arguments (before any store is
 * opened) and what it does with the store.
 *
 * @module
 */
import { createScanAuth, type QrProvider, type ReminderOptions, type ScanAuth } from '@scanauth/core'
import type { CommandLine, OptionSpec } from './args'
import { openStore } from './open-store'
import { storeMethod, using, type OpenedStore } from './opened-store'
import type { StoreConfig } from './store-config'

/** What a command prints: JSON for `--json`, else text for people. */
export interface Output {
  /** The value printed with `--json`. */
  json: unknown
  /** The lines printed otherwise. */
  text: string[]
}

/** What a command runs with. */
export interface Context {
  /** The store to use, from the options and the environment. */
  config: StoreConfig
  /** The clock (epoch milliseconds). */
  now(): number
  /** The environment (the examples' variables: `scanauth reminders` reads the WeChat ones). */
  env: Record<string, string | undefined>
  /**
   * Opens the store, runs `work` with a scanauth instance over it (the rules and commit protocol
   * the servers use), and closes everything, whatever happens. With `options.reminders` the instance
   * has core's `reminders` option; a store without `listActiveAuthorizations` is refused first
   * (`unsupported`).
   */
  withAuth<T>(work: (auth: ScanAuth, opened: OpenedStore) => Promise<T>, options?: AuthOptions): Promise<T>
}

/** What a command adds to the CLI's scanauth instance. */
export interface AuthOptions {
  /** Core's `reminders` option (`scanauth reminders`). */
  reminders?: ReminderOptions
}

/** One command. `I` is what `parse` reads from the line. */
export interface Command<I> {
  /** The name typed after `scanauth`. */
  name: string
  /** Its arguments and options, for the usage line: `grant <openid> (--days N | --points N) ...`. */
  usage: string
  /** One line for `scanauth --help`. */
  summary: string
  /** The paragraphs of `scanauth <name> --help`. */
  help: string[]
  /** Its own options (the store options, `--json` and `--help` come on top). */
  options: Record<string, OptionSpec>
  /** Examples for its help. */
  examples: string[]
  /** Reads and checks the arguments; throws `usage` errors. Runs before the store is opened. */
  parse(line: CommandLine): I
  /** Does the work. */
  run(input: I, context: Context): Promise<Output>
}

/** A command whose input type no longer matters (for the table of commands). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each command's own input type is checked where it is defined
export type AnyCommand = Command<any>

/** The QR provider of the CLI's scanauth instance: the CLI never creates scenes, so it is never called. */
const NO_QR: QrProvider = {
  createQr: async () => {
    throw new Error('the scanauth CLI never creates scenes')
  },
}

/** The context of a run over `config`, with the clock `now` and the environment `env`. */
export function contextFor(config: StoreConfig, now: () => number, env: Record<string, string | undefined> = {}): Context {
  return {
    config,
    now,
    env,
    withAuth: async (work, options = {}) => using(await openStore(config), (opened) => work(authOver(opened, now, options), opened)),
  }
}

/**
 * The CLI's scanauth instance over an opened store. With `options.reminders`, a store without
 * `listActiveAuthorizations` is refused first, as the CLI refuses a missing optional method
 * (`unsupported`), rather than by core's `invalid_options`.
 */
export function authOver(opened: OpenedStore, now: () => number, options: AuthOptions = {}): ScanAuth {
  const { reminders } = options
  if (reminders !== undefined) storeMethod(opened.store, 'listActiveAuthorizations', opened.label, 'find who is due for a reminder')
  return createScanAuth({ store: opened.store, qr: NO_QR, now, ...(reminders === undefined ? {} : { reminders }) })
}
