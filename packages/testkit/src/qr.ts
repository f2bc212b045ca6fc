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
   * What the answered code encodes, handed on as `content` (the device's `qr_content`): `null`
   * (the default) answers no content, as a provider that only knows an image address; a function
   * gets the request, e.g. `(r) => \`https://w.example.test/q/${r.sceneStr}\``.
   */
  content: ((request: { sceneStr: string; expiresInSeconds: number }) => string) | null = null

  /**
   * Records the request, then throws when {@link RecordingQrProvider.failWith} is set, else
   * answers `https://qr.example.test/<sceneStr>`, with a `content` when
   * {@link RecordingQrProvider.content} is set.
   *
   * @example
   * ```ts
   * const qr = new RecordingQrProvider()
   * const auth = createScanAuth({ store: new MemoryStore(), qr })
   * await auth.createScene({ deviceId: 'tv' })    // qr.requests[0].expiresInSeconds === 300
   * qr.content = (r) => `https://w.example.test/q/${r.sceneStr}`  // now createScene answers qrContent too
   * qr.failWith = 'quota used up'                  // createScene now fails with qr_creation_failed
   * ```
   */
  async createQr(request: { sceneStr: string; expiresInSeconds: number }): Promise<{
    /** `https://qr.example.test/<sceneStr>`. */
    url: string
    /** What {@link RecordingQrProvider.content} made of the request; absent when it is `null`. */
    content?: string
  }> {
    this.requests.push({ ...request })
    if (this.failWith !== null) throw new Error(this.failWith)
    const url = `https://qr.example.test/${request.sceneStr}`
    return this.content === null ? { url } : { url, content: this.content({ ...request }) }
  }
}
