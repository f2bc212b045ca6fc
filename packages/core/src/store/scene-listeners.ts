/**
 * `SceneListenerSet`: the listeners a store keeps for `Store.watchScenes`, the same in every store —
 * each registration its own (one function registered twice is two registrations, each stopped on
 * its own), the first one and the last one leaving announced (a store opens and closes its
 * subscription to its backend there), and the listeners of the moment told (one that stopped
 * meanwhile is told nothing more). What a store adds is only its own I/O.
 *
 * @module
 */
import type { SceneChangeListener } from './contract'

/** What a store does when its first listener arrives and when its last one leaves. */
export interface SceneListenerEvents {
  /** After the first listener was added (none before). */
  onFirst?(): void
  /** After the last listener was removed by its stop function (not by {@link SceneListenerSet.clear}). */
  onLast?(): void
}

/** A store's scene listeners; see the module comment. */
export class SceneListenerSet {
  private readonly listeners = new Set<SceneChangeListener>()

  constructor(private readonly events: SceneListenerEvents = {}) {}

  /** How many listeners are registered. */
  get size(): number {
    return this.listeners.size
  }

  /** Registers `listener`; returns the function that removes this registration (calling it again does nothing). */
  add(listener: SceneChangeListener): () => void {
    // A wrapper of our own, so that one function registered twice is two registrations.
    const registration: SceneChangeListener = (sceneStr) => listener(sceneStr)
    this.listeners.add(registration)
    if (this.listeners.size === 1) this.events.onFirst?.()
    return () => {
      if (this.listeners.delete(registration) && this.listeners.size === 0) this.events.onLast?.()
    }
  }

  /** Tells every listener registered now of `sceneStr`, synchronously. */
  tell(sceneStr: string): void {
    for (const listener of [...this.listeners]) listener(sceneStr)
  }

  /** Forgets every listener (the store is closing), without announcing the last one. */
  clear(): void {
    this.listeners.clear()
  }
}
