/**
 * A MemoryStore that counts its `watchScenes` subscriptions, to show that waits leave nothing behind.
 *
 * @module
 */
import { MemoryStore } from '@scanauth/core'
import { type SceneChangeListener } from '@scanauth/core/store'

/**
 * A `MemoryStore` that counts the `watchScenes` subscriptions it holds: one while anything
 * waits in an instance (docs/behaviour.md B-wait-4, one subscription however many waiters), 0 once
 * every wait has ended. A test reads {@link WatchCountingStore.subscriptions} or waits for a count
 * with `eventually` (`waiting.ts`).
 */
export class WatchCountingStore extends MemoryStore {
  /** The subscriptions held now. */
  subscriptions = 0
  /** Every subscription ever taken (a test can tell "never subscribed" from "subscribed and released"). */
  subscribed = 0

  /** Subscribes as a MemoryStore does, counting the subscription until the returned function ends it. */
  override watchScenes(listener: SceneChangeListener): () => void {
    this.subscriptions++
    this.subscribed++
    const stop = super.watchScenes(listener)
    let stopped = false
    return () => {
      // Counted once however often it is called, as the contract lets a caller call it again.
      if (stopped) return
      stopped = true
      this.subscriptions--
      stop()
    }
  }
}
