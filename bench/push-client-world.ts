/**
 * The outside world of the client rows (`bench/push-client.ts`, issue 19), in a child process of its
 * own: the WeChat emulator (`startWechatEmulator`, plain mode), whose `scan` pushes a signed scan
 * event to the app's `/wechat/callback` as WeChat does, and the device, which signs in over the
 * app's routes on real sockets, one of two ways per sample:
 *
 * - `raw`: the bench's own reading of the event stream, the least a device can do: `fetch` of
 *   `POST create_scene`, then `fetch` of `GET events?scene=…`, its body read chunk by chunk and the
 *   `status` events picked out with a regular expression;
 * - `client`: `createScanAuthClient({ baseUrl }).signIn({ deviceId, onCode, onStatus })` of
 *   `@scanauth/client`, its default transport (`'auto'`: the event stream first).
 *
 * Both stamps of a sample are taken here: just before `emulator.scan()`, and when the device has
 * its answer (the chunk carrying the `authorized` event arrived, for `raw`; `signIn` resolved, for
 * `client`). Before the first stamp, the device's stream is open and its first event (`pending`)
 * has arrived, and a few milliseconds plus a random part have passed (a person takes seconds to
 * scan; the app's wait is then in place).
 *
 * Messages: it sends {@link ClientWorldReady} once the emulator listens; `{ type: 'callback', url }`
 * points the emulator's pushes at the app (answered `{ type: 'callback-set' }`); {@link SampleAsk}
 * runs one sample and answers {@link ClientSampled}; `{ type: 'close' }` closes the emulator and exits.
 *
 * @module
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { createScanAuthClient } from '@scanauth/client'
import { startWechatEmulator } from '@scanauth/wechat-emulator'

/** What the app needs to use the emulated Official Account. */
export interface ClientWorldReady {
  type: 'ready'
  url: string
  appId: string
  appSecret: string
  token: string
}

/** The two devices compared. */
export type DeviceKind = 'raw' | 'client'

/** One sample asked of this process. */
export interface SampleAsk {
  type: 'sample'
  /** The app's scanauth mount, e.g. `http://127.0.0.1:1234/auth`. */
  base: string
  device: DeviceKind
  openid: string
}

/** One sample's answer. */
export interface ClientSampled {
  type: 'sampled'
  /** Microseconds from just before `emulator.scan()` to the device's answer; -1 when none came within 10 s. */
  us: number
  /** The device's final status (must be `authorized`). */
  status: string
  /** How the answer arrived (`events` for the raw device; the client's transport for the client). */
  transport: string
}

const ACCOUNT = { appId: 'wx00e0bench0client00', appSecret: 'bench-app-secret', token: 'bench-token' }
/** The longest a sample may take before it counts as lost. */
const SAMPLE_TIMEOUT_MS = 10_000

/** Statuses of the `status` events in `text`, in order. */
const statuses = (text: string) => [...text.matchAll(/event: status\ndata: \{"status":"([a-z_]+)"/g)].map((m) => m[1] as string)

/** A device that is waiting: resolves `opened` once its first event came, `answered` with the stamp of its final answer. */
interface Waiting {
  sceneStr: string
  answered: Promise<{ at: bigint; status: string; transport: string }>
}

/** The raw device: create_scene, then the event stream read by hand; resolves once the first event arrived. */
async function rawDevice(base: string, deviceId: string): Promise<Waiting> {
  const created = await fetch(`${base}/create_scene`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ device_id: deviceId }) })
  const { scene_str: sceneStr } = (await created.json()) as { scene_str: string }
  const response = await fetch(`${base}/events?scene=${sceneStr}`, { headers: { accept: 'text/event-stream' } })
  const reader = (response.body as ReadableStream<Uint8Array>).getReader()
  const decoder = new TextDecoder()
  let text = ''
  while (statuses(text).length === 0) {
    const chunk = await reader.read()
    if (chunk.done) throw new Error(`the stream ended before its first event: ${text.slice(0, 200)}`)
    text += decoder.decode(chunk.value, { stream: true })
  }
  const answered = (async () => {
    for (;;) {
      const chunk = await reader.read()
      const at = process.hrtime.bigint()
      if (chunk.done) return { at, status: statuses(text).at(-1) ?? '', transport: 'events' }
      text += decoder.decode(chunk.value, { stream: true })
      const last = statuses(text).at(-1) ?? ''
      if (last !== 'pending' && last !== 'scanned') {
        // Read to the end (the server ends the stream after the final status), untimed.
        void (async () => {
          while (!(await reader.read()).done);
        })().catch(() => undefined)
        return { at, status: last, transport: 'events' }
      }
    }
  })()
  return { sceneStr, answered }
}

/** The client device: `signIn`, resolved once its first status (`pending`) came. */
async function clientDevice(base: string, deviceId: string): Promise<Waiting> {
  const client = createScanAuthClient({ baseUrl: base })
  let sceneStr = ''
  let transport = ''
  let opened: () => void = () => {}
  const first = new Promise<void>((resolve) => (opened = resolve))
  const signing = client.signIn({
    deviceId,
    onCode: (code) => void (sceneStr = code.sceneStr),
    onStatus: (update) => {
      transport = update.transport
      opened()
    },
  })
  const answered = signing.then((result) => ({ at: process.hrtime.bigint(), status: result.status, transport }))
  await Promise.race([first, answered])
  return { sceneStr, answered }
}

async function main(): Promise<void> {
  if (process.send === undefined) throw new Error('bench/push-client-world.ts runs as a child of bench/push-client.ts (IPC)')
  const emulator = await startWechatEmulator({ port: 0, host: '127.0.0.1', ...ACCOUNT })
  process.send({ type: 'ready', url: emulator.url, ...ACCOUNT } satisfies ClientWorldReady)
  process.on('message', (message: { type: string; url?: string } | SampleAsk) => {
    void (async () => {
      if (message.type === 'close') {
        await emulator.close()
        process.exit(0)
      }
      if (message.type === 'callback') {
        await emulator.setCallbackUrl((message as { url: string }).url)
        process.send?.({ type: 'callback-set' })
      }
      if (message.type !== 'sample') return
      const ask = message as SampleAsk
      const deviceId = `bench-client-${ask.device}`
      const device = await (ask.device === 'raw' ? rawDevice(ask.base, deviceId) : clientDevice(ask.base, deviceId))
      await sleep(3 + Math.random() * 25)
      const start = process.hrtime.bigint()
      const pushed = await emulator.scan({ sceneStr: device.sceneStr, openid: ask.openid })
      if (pushed.replyError !== undefined && pushed.replyError !== null) throw new Error(`bench: the callback's reply was refused: ${String(pushed.replyError)}`)
      const timeout = new AbortController()
      const end = await Promise.race([device.answered, sleep(SAMPLE_TIMEOUT_MS, null, { signal: timeout.signal }).catch(() => null)])
      timeout.abort()
      const answer: ClientSampled =
        end === null ? { type: 'sampled', us: -1, status: 'none', transport: '' } : { type: 'sampled', us: Number(end.at - start) / 1000, status: end.status, transport: end.transport }
      process.send?.(answer)
    })().catch((error: unknown) => {
      process.send?.({ type: 'sampled', us: -1, status: `error: ${error instanceof Error ? error.message : String(error)}`, transport: '' } satisfies ClientSampled)
    })
  })
}

await main()
