/**
 * Change notification (`Store.watchScenes`, docs/behaviour.md B-wait-4) through PostgreSQL's
 * LISTEN/NOTIFY. Every commit that writes a scene calls `pg_notify('<schema>_scanauth_scenes',
 * scene_str)` inside its own transaction, so a notification is delivered exactly when the write
 * commits, to every session listening on the channel, whichever process committed.
 *
 * While a store has listeners it keeps one client checked out of the application's pool, listening
 * on the channel; the last listener leaving (or `close()`) unlistens and gives the client back. The
 * subscription is made lazily: the store's next load or commit waits for it, which is what the
 * Store contract promises ("committed after the store's next read or commit"). A client that fails
 * is dropped; the next load or commit while listeners remain subscribes again.
 *
 * @module
 */
import type { Notification, Pool, PoolClient } from 'pg'
import type { SceneChangeListener } from '@scanauth/core'
import { quoteIdentifier } from './schema'

/** One store's subscription to its channel, shared by all of its listeners. */
export class SceneListener {
  private readonly listeners = new Set<SceneChangeListener>()
  private client: PoolClient | null = null
  /** Removes our handlers from {@link SceneListener.client} (and only ours: the pool has its own). */
  private detach: () => void = () => undefined
  /** The subscription being made, if any. */
  private subscribing: Promise<void> | null = null

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
    // A wrapper of our own, so that one function registered twice is two registrations.
    const registration: SceneChangeListener = (sceneStr) => listener(sceneStr)
    this.listeners.add(registration)
    return () => {
      if (this.listeners.delete(registration) && this.listeners.size === 0) void this.unsubscribe()
    }
  }

  /**
   * Resolves once the subscription is live if anyone listens (subscribing now when it is not);
   * at once when nobody does. Loads and commits await it. A failure to subscribe is not thrown
   * here (it must not fail a load): the next call tries again.
   */
  async ready(): Promise<void> {
    if (this.listeners.size === 0 || this.client !== null) return
    this.subscribing ??= this.subscribe().finally(() => {
      this.subscribing = null
    })
    await this.subscribing.catch(() => undefined)
  }

  /** Unsubscribes and forgets every listener. */
  async close(): Promise<void> {
    this.listeners.clear()
    await this.subscribing?.catch(() => undefined)
    await this.unsubscribe()
  }

  private async subscribe(): Promise<void> {
    const client = await this.pool.connect()
    const onNotification = (message: Notification) => {
      if (message.channel !== this.channel || message.payload === undefined) return
      for (const listener of [...this.listeners]) listener(message.payload)
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
