/**
 * The sending half of change notification (`Store.watchScenes`; the listening half is
 * `scene-listener.ts`): after a commit that wrote a scene has committed, one `SELECT
 * pg_notify('<schema>_scanauth_scenes', scene_str)` of its own tells every listening session,
 * whichever process they are in.
 *
 * Why not inside the commit: a transaction that notifies takes PostgreSQL's server-wide notify lock
 * at commit and holds it until the transaction has ended, so a commit that notifies holds it
 * through its WAL flush, and every scene commit on the server would flush one at a time instead of
 * sharing flushes (measured in docs/benchmarks.md, PostgreSQL section: scans at a third of a raw
 * read-and-update transaction). A statement that only notifies, committing asynchronously
 * ({@link NOTIFY_STATEMENT}), holds the lock for a moment.
 *
 * What that costs: one more statement, sent without awaiting it (the commit has already
 * answered) and shared by the writes that commit while one is on its way, and a notification is
 * lost if the process dies or the connection fails between the commit and its notification. That is within the Store contract ("unless the connection to the backend is
 * lost"): a waiter then learns of the write at its next read, at the latest when its wait times out.
 *
 * @module
 */
import type { Pool } from 'pg'

/**
 * One notification per scene string, in a transaction of its own that commits asynchronously
 * (`synchronous_commit` off for this transaction only, through `set_config(…, true)`): queue
 * entries carry the transaction's id, so a notifying transaction writes a commit record, and with
 * the default setting it would wait for that record's flush holding the notify lock. Nothing is
 * lost by not waiting: a notification is never durable (listeners connected at the time get it,
 * whatever happens to the WAL), and the writes it tells of committed durably before it was sent.
 */
export const NOTIFY_STATEMENT = `SELECT pg_notify($1, s)
  FROM (SELECT set_config('synchronous_commit', 'off', true)) AS only_this_transaction, unnest($2::text[]) AS s`

/** The LISTEN/NOTIFY channel of a schema's scene writes. */
export function sceneChannel(schema: string): string {
  return `${schema}_scanauth_scenes`
}

/**
 * Sends one store's notifications: at most one notifying statement in flight; the scene strings
 * of writes committed meanwhile wait and go together in the next one. Under load that is one
 * statement per round trip however many scans commit, so notifying takes next to nothing from
 * the pool; a notification waits at most one round trip longer.
 */
export class SceneNotifier {
  private readonly waiting = new Set<string>()
  private sending: Promise<void> | null = null

  /**
   * @param pool The application's pool.
   * @param channel The channel name (`<schema>_scanauth_scenes`).
   * @param statementName The name of the prepared statement, per schema like every other.
   */
  constructor(
    private readonly pool: Pool,
    private readonly channel: string,
    private readonly statementName: string,
  ) {}

  /**
   * Tells every listening session of a committed write of `sceneStr`, without making the caller
   * wait. A failure is dropped: the write has committed, and the caller of the commit must not be
   * told otherwise; a waiter learns of the write at its next read.
   */
  notify(sceneStr: string): void {
    this.waiting.add(sceneStr)
    this.sending ??= this.sendWaiting()
  }

  /** Resolves once every notification asked for so far has been sent (or has failed). */
  async settled(): Promise<void> {
    while (this.sending !== null) await this.sending
  }

  private async sendWaiting(): Promise<void> {
    while (this.waiting.size > 0) {
      const batch = [...this.waiting]
      this.waiting.clear()
      await this.pool
        .query({ name: this.statementName, text: NOTIFY_STATEMENT, values: [this.channel, batch] })
        .catch(() => undefined)
    }
    this.sending = null
  }
}
