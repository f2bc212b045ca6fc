/**
 * The poll secrets of the scenes a client's sign-ins ended on with `need_purchase`: a scene purchase
 * waits on that scene, and the server gives the session token of a scene with a poll secret only to a
 * request that presents it (`X-Scanauth-Poll-Secret`, B-secret-1…4). Kept inside the client object,
 * never handed to the app; bounded, so a kiosk that never buys does not grow it.
 *
 * @module
 */

/** How many scenes' secrets a client keeps: the most recent ones. */
export const MAX_KEPT_SECRETS = 32

/** Poll secrets by scene, the most recent {@link MAX_KEPT_SECRETS}. */
export class SceneSecrets {
  private readonly secrets = new Map<string, string>()

  /** Keeps `pollSecret` for `sceneStr`, dropping the oldest beyond the bound. */
  keep(sceneStr: string, pollSecret: string): void {
    this.secrets.delete(sceneStr)
    this.secrets.set(sceneStr, pollSecret)
    while (this.secrets.size > MAX_KEPT_SECRETS) {
      const oldest = this.secrets.keys().next()
      if (oldest.done === true) break
      this.secrets.delete(oldest.value)
    }
  }

  /** The secret kept for `sceneStr`, if any. */
  get(sceneStr: string): string | undefined {
    return this.secrets.get(sceneStr)
  }

  /** Forgets `sceneStr` (its purchase went through: its session token has been read). */
  forget(sceneStr: string): void {
    this.secrets.delete(sceneStr)
  }
}
