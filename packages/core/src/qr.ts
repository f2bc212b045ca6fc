/**
 * The messaging-platform side of creating a scene.
 *
 * @module
 */

/** Asks the messaging platform for a temporary scannable code that carries `sceneStr`. */
export interface QrProvider {
  /**
   * Creates a code valid for `expiresInSeconds` and returns its address. Throw on any failure; the
   * error's message becomes the reason in the 502 `detail` ("QR code creation failed: <reason>").
   */
  createQr(request: { sceneStr: string; expiresInSeconds: number }): Promise<{ url: string }>
}
