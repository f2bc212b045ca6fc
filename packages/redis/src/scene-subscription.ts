/**
 * Change notification on Redis (`Store.watchScenes`, docs/behaviour.md B-wait-4): the commit
 * script itself publishes the `scene_str` of every scene it writes on the channel
 * `<prefix>scenes`, so a process that only scans needs no configuration; a store with listeners
 * holds ONE subscriber connection, a duplicate of the application's client, and closes it when
 * its last listener leaves. On a Cluster, a PUBLISH on the prefix's master reaches subscribers on
 * every node (https://redis.io/docs/latest/develop/interact/pubsub/), so the subscriber may sit
 * on any of them.
 *
 * A message published while the connection is down is lost (pub/sub keeps nothing): the waits
 * then end at their timeout with a fresh read, and clients poll again (docs/redis.md).
 *
 * @module
 */
import { SceneListenerSet, type SceneChangeListener } from '@scanauth/core/store'
import type { Cluster, Redis } from 'ioredis'

/**
 * How long a load waits at most for a subscription being set up (see {@link SceneSubscription.settling}):
 * normally one round trip; longer only when the server cannot be reached, and then the wait ends
 * at its timeout anyway.
 */
export const SUBSCRIBE_WAIT_MS = 2_000

/** After a SUBSCRIBE that failed, the next attempt while there are still listeners. */
export const RESUBSCRIBE_DELAY_MS = 1_000

/** The listeners of one store and the subscriber connection held for them. */
export class SceneSubscription {
  private readonly listeners = new SceneListenerSet({ onLast: () => void this.shut() })
  private connection: Redis | Cluster | null = null
  private settlingPromise: Promise<void> | null = null
  private retry: NodeJS.Timeout | null = null

  /**
   * @param client The application's client, duplicated for the subscriber connection (same
   *   options, same servers); never used for anything else.
   * @param channel The channel the commit script publishes on.
   */
  constructor(
    private readonly client: Redis | Cluster,
    readonly channel: string,
  ) {}

  /** Registers a listener; the first one opens the subscriber connection, the last one leaving closes it. */
  watch(listener: SceneChangeListener): () => void {
    const stop = this.listeners.add(listener)
    if (this.connection === null && this.retry === null) this.open()
    return stop
  }

  /**
   * While a subscription is being set up: a promise that settles once SUBSCRIBE is confirmed
   * (or failed, or after {@link SUBSCRIBE_WAIT_MS}); otherwise null. The store's loads wait for
   * it, so a wait's first read happens after the subscription is in place: a scan committed
   * before that read is seen by the read, one committed after it is published to us.
   */
  get settling(): Promise<void> | null {
    return this.settlingPromise
  }

  /** Whether the subscriber connection is open (only while there are listeners). */
  get connected(): boolean {
    return this.connection !== null
  }

  /** Forgets every listener and closes the subscriber connection, if any. */
  close(): Promise<void> {
    this.listeners.clear()
    return this.shut()
  }

  private open(): void {
    const connection = this.client.duplicate()
    this.connection = connection
    // ioredis reconnects (and subscribes again) by itself; an error event without a listener
    // would only be logged by ioredis. Waits time out meanwhile.
    connection.on('error', () => undefined)
    connection.on('message', (channel: string, sceneStr: string) => {
      if (channel === this.channel && this.connection === connection) this.tell(sceneStr)
    })
    const subscribed = connection.subscribe(this.channel).then(
      () => undefined,
      () => {
        // Never subscribed (the server refused or could not be reached): drop this connection
        // and try again shortly while someone still listens.
        if (this.connection !== connection) return
        void this.shut()
        if (this.listeners.size > 0) this.scheduleRetry()
      },
    )
    let timer: NodeJS.Timeout | undefined
    const settling = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, SUBSCRIBE_WAIT_MS)
      timer.unref()
      void subscribed.then(resolve)
    }).then(() => {
      clearTimeout(timer)
      if (this.settlingPromise === settling) this.settlingPromise = null
    })
    this.settlingPromise = settling
  }

  private scheduleRetry(): void {
    this.retry = setTimeout(() => {
      this.retry = null
      if (this.listeners.size > 0 && this.connection === null) this.open()
    }, RESUBSCRIBE_DELAY_MS)
    this.retry.unref()
  }

  private async shut(): Promise<void> {
    if (this.retry !== null) clearTimeout(this.retry)
    this.retry = null
    this.settlingPromise = null
    const connection = this.connection
    this.connection = null
    if (connection === null) return
    // A connection not (yet, or no longer) ready has nothing to say goodbye to: a QUIT would wait
    // in ioredis's offline queue. A ready one gets QUIT (allowed while subscribed), which
    // unsubscribes it; if that fails, the socket is dropped.
    if (connection.status !== 'ready') return connection.disconnect()
    await connection.quit().then(
      () => undefined,
      () => connection.disconnect(),
    )
  }

  /** Calls every listener of the moment (one that stopped is told nothing more). */
  private tell(sceneStr: string): void {
    this.listeners.tell(sceneStr)
  }
}
