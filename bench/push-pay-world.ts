/**
 * The outside world of the paid → device latency rows (`bench/push-pay.ts`, Native and JSAPI), in a
 * child process of its own: the WeChat Pay emulator (`startWechatPayEmulator`, which signs and
 * delivers notifications as WeChat Pay does, and pays a JSAPI order as its payer) and the device,
 * which waits on the app's event stream over a real socket.
 * Both stamps of a sample are taken here, just before `pay()` and when the `authorized` event
 * arrives, so the time needs no clock shared between processes. The app under test runs in the
 * parent, on a core of its own as far as two cores allow.
 *
 * Messages: it sends {@link PayWorldReady} once the emulator listens; `{ type: 'sample', port,
 * sceneStr, outTradeNo }` opens the stream of the scene, checks that its first event says
 * `need_purchase`, waits a moment (a payer takes seconds to pay; the app's wait is then in place),
 * pays the order, whichever endpoint opened it, and answers {@link PaySampled}; `{ type: 'close' }`
 * closes the emulator and exits.
 *
 * @module
 */
import { get, type IncomingMessage } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { startWechatPayEmulator, type WechatPayMerchantKey } from '@scanauth/wechat-emulator'

/** What the app needs to talk to the emulator: its address, the merchant and the keys. */
export interface PayWorldReady {
  type: 'ready'
  url: string
  mchid: string
  appid: string
  apiV3Key: string
  platformSerial: string
  verificationKeys: Record<string, string>
  merchantKey: WechatPayMerchantKey
}

/** One sample: microseconds from just before `pay()` to the next event reaching the device (-1: none within 10 s). */
export interface PaySampled {
  type: 'sampled'
  us: number
  /** The first event's status (must be `need_purchase`) and the last one's (must be `authorized`). */
  first: string
  last: string
  /** The paid transaction's `trade_type` (`NATIVE` or `JSAPI`): which endpoint opened the order. */
  tradeType: string
}

/** The longest a sample may take before it counts as lost (the notification was refused, say). */
const SAMPLE_TIMEOUT_MS = 10_000

/** Statuses of the `status` events in `text`, in order. */
const statuses = (text: string) => [...text.matchAll(/event: status\ndata: \{"status":"([a-z_]+)"/g)].map((m) => m[1] as string)

/** A device's event stream: the first event, and the moment a final one arrived. */
interface DeviceStream {
  response: IncomingMessage
  /** Statuses received so far. */
  seen(): string[]
  /** Resolves with the time the chunk carrying a status other than the first arrived (stamped on arrival). */
  changed: Promise<bigint>
}

/** Opens the event stream of `sceneStr` on a connection of its own, as a device's browser would; resolves once its first event arrived. */
function openStream(port: number, sceneStr: string): Promise<DeviceStream> {
  return new Promise((resolve, reject) => {
    const request = get({ host: '127.0.0.1', port, path: `/auth/events?scene=${sceneStr}`, agent: false, headers: { accept: 'text/event-stream' } })
    request.once('error', reject)
    request.once('response', (response) => {
      let text = ''
      let opened = false
      let changedAt: (at: bigint) => void = () => {}
      const changed = new Promise<bigint>((done) => (changedAt = done))
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => {
        const at = process.hrtime.bigint()
        text += chunk
        const seen = statuses(text)
        if (!opened && seen.length > 0) {
          opened = true
          resolve({ response, seen: () => statuses(text), changed })
        }
        if (seen.length > 1) changedAt(at)
      })
      response.once('end', () => (opened ? undefined : reject(new Error(`the stream ended before its first event: ${text.slice(0, 200)}`))))
    })
  })
}

async function main(): Promise<void> {
  if (process.send === undefined) throw new Error('bench/push-pay-world.ts runs as a child of bench/push-pay.ts (IPC)')
  const emulator = await startWechatPayEmulator({ mchid: '1900000109', appid: 'wx0000000000test' })
  const merchantKey = emulator.merchantKey
  if (merchantKey === null) throw new Error('bench: the emulator made no merchant key')
  const ready: PayWorldReady = {
    type: 'ready',
    url: emulator.url,
    mchid: emulator.mchid,
    appid: emulator.appid,
    apiV3Key: emulator.apiV3Key,
    platformSerial: emulator.platformSerial,
    verificationKeys: emulator.verificationKeys,
    merchantKey,
  }
  process.send(ready)
  process.on('message', async (message: { type: string; port?: number; sceneStr?: string; outTradeNo?: string }) => {
    if (message.type === 'close') {
      await emulator.close()
      process.exit(0)
    }
    if (message.type !== 'sample') return
    const stream = await openStream(message.port as number, message.sceneStr as string)
    await sleep(3 + Math.random() * 25)
    const start = process.hrtime.bigint()
    const transaction = await emulator.pay({ outTradeNo: message.outTradeNo as string })
    const timeout = new AbortController()
    const end = await Promise.race([stream.changed, sleep(SAMPLE_TIMEOUT_MS, null, { signal: timeout.signal }).catch(() => null)])
    timeout.abort()
    const seen = stream.seen()
    stream.response.destroy()
    const answer: PaySampled = {
      type: 'sampled',
      us: end === null ? -1 : Number(end - start) / 1000,
      first: seen[0] ?? '',
      last: seen.at(-1) ?? '',
      tradeType: String(transaction.trade_type),
    }
    process.send?.(answer)
  })
}

await main()
