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
  createQr(request: QrRequest): Promise<QrCode>
}

/** What {@link QrProvider.createQr} is asked for. */
export interface QrRequest {
  /** The scene the code must carry (`pc_` and 32 hex characters, within WeChat's 64-character limit). */
  sceneStr: string
  /** How long the code must stay scannable: the scene lifetime. */
  expiresInSeconds: number
}

/** What {@link QrProvider.createQr} returns. */
export interface QrCode {
  /** The address of the code's image (or of its content), handed to the device as `qr_url`. */
  url: string
  /**
   * The text the code encodes (for WeChat, the `url` of its `qrcode/create` answer), handed to the
   * device as `qr_content` so that it can draw the code itself, e.g. in a terminal. Optional: without
   * it (or when empty) the device gets `qr_url` only.
   */
  content?: string
}
