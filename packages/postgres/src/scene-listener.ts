/**
 * Change notification (`Store.watchScenes`, docs/behaviour.md B-wait-4) through PostgreSQL's
 * LISTEN/NOTIFY: the listening half. After a commit that wrote a scene has committed, its store
 * sends `pg_notify('<schema>_scanauth_scenes', scene_str)` in a statement of its own
 * (`scene-notifier.ts`), delivered to every session listening on the channel, whichever process
 * committed; it is lost if that process dies between the commit and the notification.
 *
 * While a store has listeners it keeps one client checked out of the application's pool, listening
 * on the channel; the last listener leaving (or `close()`) unlistens and gives the client back. The
 * subscription is made lazily: the store's next load or commit waits for it, which is what the
 * Store contract promises ("committed after the store's next read or commit"). A client that fails
 * is dropped; a load or commit while listeners remain subscribes again, at most once every
 * {@link RESUBSCRIBE_DELAY_MS} after a failed attempt, so a database that refuses connections does
 * not cost every poll a connection attempt.
 *
 * @module
 */
import type { Notification, Pool, PoolClient } from 'pg'
import { SceneListenerSet, type SceneChangeListener } from '@scanauth/core/store'
import { quoteIdentifier } from './schema'

/** After a failed subscription, the least time before a load or commit tries again. */
export const RESUBSCRIBE_DELAY_MS = 1_000

/** One store's subscription to its channel, shared by all of its listeners. */
export class SceneListener {
  private readonly listeners = new SceneListenerSet({ onLast: () => void this.unsubscribe() })
  private client: PoolClient | null = null
  /** Removes our handlers from {@link SceneListener.client} (and only ours: the pool has its own). */
  private detach: () => void = () => undefined
  /** The subscription being made, if any. */
  private subscribing: Promise<void> | null = null
  /** No new attempt before this time (`Date.now()`, only to pace retries) after a failed one. */
  private retryAt = 0

  /**
   * @param pool The application's pool, to check the listening client out of.
   * @param channel The channel name (`<schema>_scanauth_scenes`).
   */
  constructor(
    private readonly pool: Pool,
    private readonly channel: string,
  ) {}

  /** Whether a client is checked out and listening. */
  get listening(): boolean {
    return this.client !== null
  }

  /** Registers a listener; returns the function that removes it (the last one unsubscribes). */
  watch(listener: SceneChangeListener): () => void {
    return this.listeners.add(listener)
  }

  /**
   * What a load or commit must wait for first: the subscription being made when someone listens
   * and none is live (starting it if no failed attempt is recent), or null — the usual case, on a
   * poll's path, which then costs no promise. It never rejects: a failure to subscribe must not
   * fail a load; a later call tries again.
   */
  pending(): Promise<void> | null {
    if (this.listeners.size === 0 || this.client !== null) return null
    if (this.subscribing === null) {
      if (Date.now() < this.retryAt) return null
      this.subscribing = this.subscribe().then(
        () => {
          this.subscribing = null
        },
        () => {
          this.subscribing = null
          this.retryAt = Date.now() + RESUBSCRIBE_DELAY_MS
        },
      )
    }
    return this.subscribing
  }

  /** Unsubscribes and forgets every listener. */
  async close(): Promise<void> {
    this.listeners.clear()
    await this.subscribing
    await this.unsubscribe()
  }

  private async subscribe(): Promise<void> {
    const client = await this.pool.connect()
    const onNotification = (message: Notification) => {
      if (message.channel !== this.channel || message.payload === undefined) return
      this.listeners.tell(message.payload)
    }
    const detach = () => {
      client.off('notification', onNotification)
      client.off('error', onError)
    }
    const onError = () => {
      // The connection is gone: drop it (destroyed, not reused); the next load or commit subscribes again.
      detach()
      if (this.client === client) this.client = null
      client.release(true)
    }
    client.on('notification', onNotification)
    client.on('error', onError)
    try {
      await client.query(`LISTEN ${quoteIdentifier(this.channel)}`)
    } catch (error) {
      detach()
      client.release(true)
      throw error
    }
    this.client = client
    this.detach = detach
    // Everyone may have left while we were subscribing.
    if (this.listeners.size === 0) await this.unsubscribe()
  }

  private async unsubscribe(): Promise<void> {
    const client = this.client
    if (client === null) return
    this.client = null
    this.detach()
    // A connection error while unlistening must not go unhandled (an 'error' event without listener throws).
    const ignore = () => undefined
    client.on('error', ignore)
    try {
      await client.query(`UNLISTEN ${quoteIdentifier(this.channel)}`)
      client.off('error', ignore)
      client.release()
    } catch (error) {
      client.off('error', ignore)
      client.release(error instanceof Error ? error : true)
    }
  }
}
