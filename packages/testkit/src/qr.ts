/**
 * A QrProvider that records its requests and can be told to fail, for tests of the service. (The
 * WeChat provider itself is tested against the emulator in `@scanauth/wechat`.)
 *
 * @module
 */
import type { QrProvider } from '@scanauth/core'

/** Records every `createQr` request; `failWith` makes the next calls throw. */
export class RecordingQrProvider implements QrProvider {
  /** Every request, in order (copies of what `createQr` was given). */
  readonly requests: Array<{
    /** The scene the code was asked for. */
    sceneStr: string
    /** The lifetime asked for, in seconds (the service's `sceneTtlSeconds`). */
    expiresInSeconds: number
  }> = []
  /** When set, `createQr` throws an Error with this message. */
  failWith: string | null = null

  /**
   * Records the request, then throws when {@link RecordingQrProvider.failWith} is set, else
   * answers `https://qr.example.test/<sceneStr>`.
   *
   * @example
   * ```ts
   * const qr = new RecordingQrProvider()
   * const auth = createScanAuth({ store: new MemoryStore(), qr })
   * await auth.createScene({ deviceId: 'tv' })    // qr.requests[0].expiresInSeconds === 300
   * qr.failWith = 'quota used up'                  // createScene now fails with qr_creation_failed
   * ```
   */
  async createQr(request: { sceneStr: string; expiresInSeconds: number }): Promise<{
    /** `https://qr.example.test/<sceneStr>`. */
    url: string
  }> {
    this.requests.push({ ...request })
    if (this.failWith !== null) throw new Error(this.failWith)
    return { url: `https://qr.example.test/${request.sceneStr}` }
  }
}
