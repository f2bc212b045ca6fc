/**
 * A QrProvider that records its requests and can be told to fail, for tests of the service. (The
 * WeChat provider itself is tested against the emulator in `@scanauth/wechat`.)
 *
 * @module
 */
import type { QrProvider } from '@scanauth/core'

/** Records every `createQr` request; `failWith` makes the next calls throw. */
export class RecordingQrProvider implements QrProvider {
  /** Every request, in order. */
  readonly requests: Array<{ sceneStr: string; expiresInSeconds: number }> = []
  /** When set, `createQr` throws an Error with this message. */
  failWith: string | null = null

  async createQr(request: { sceneStr: string; expiresInSeconds: number }): Promise<{ url: string }> {
    this.requests.push({ ...request })
    if (this.failWith !== null) throw new Error(this.failWith)
    return { url: `https://qr.example.test/${request.sceneStr}` }
  }
}
