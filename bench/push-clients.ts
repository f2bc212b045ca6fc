/**
 * The devices of `bench/push-connections.ts`: a child process that opens many event streams
 * (`GET /auth/events?scene=…`) to the server of `bench/push-server.ts` and holds them. Plain TCP
 * sockets with a hand-written request, the lightest client there is, so that the load generator
 * needs little memory and CPU of the shared machine; it reads only as far as the first `status`
 * event (which must say `pending`), then counts heartbeat comments.
 *
 *   argv: <port>
 *
 * Messages: `{ type: 'open', scenes, concurrency }` opens one stream per scene, at most
 * `concurrency` being set up at once, and answers {@link ClientsOpened}; `{ type: 'stats' }` answers
 * {@link ClientStats}; `{ type: 'drop' }` closes every stream and answers `{ type: 'dropped' }`;
 * `{ type: 'close' }` exits.
 *
 * @module
 */
import { connect, type Socket } from 'node:net'

/** The answer to `open`. */
export interface ClientsOpened {
  type: 'opened'
  /** Streams that delivered their first event, `pending`. */
  opened: number
  /** Streams that failed or said anything else first. */
  failed: number
  /** Wall-clock time to open them all, ms. */
  ms: number
  /** The first failure, when there was one. */
  firstError?: string
}

/** The answer to `stats`. */
export interface ClientStats {
  type: 'stats'
  /** Heartbeat comments received on all streams so far. */
  heartbeats: number
  /** Streams the server ended (there should be none while the scenes are pending). */
  endedByServer: number
  /** Streams held open now. */
  open: number
}

const sockets = new Set<Socket>()
let heartbeats = 0
let endedByServer = 0

/** Opens one stream and resolves once its first event arrived (`pending`); rejects otherwise. */
function openStream(port: number, scene: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', noDelay: true })
    let head = ''
    let ready = false
    socket.setEncoding('utf8')
    socket.on('connect', () => {
      socket.write(`GET /auth/events?scene=${scene} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\n\r\n`)
    })
    socket.on('data', (chunk: string) => {
      if (ready) {
        if (chunk.includes(': heartbeat')) heartbeats++
        return
      }
      head += chunk
      const event = /event: status\ndata: (.*)\n\n/.exec(head)
      if (event === null) return
      ready = true
      head = ''
      if (!/"status":"pending"/.test(event[1] as string)) {
        socket.destroy()
        return reject(new Error(`first event: ${event[1]}`))
      }
      sockets.add(socket)
      resolve()
    })
    socket.on('error', (error) => {
      if (!ready) reject(error)
    })
    socket.on('close', () => {
      if (!ready) return reject(new Error(`closed before the first event: ${head.slice(0, 200)}`))
      if (sockets.delete(socket)) endedByServer++
    })
  })
}

async function openAll(port: number, scenes: string[], concurrency: number): Promise<ClientsOpened> {
  const began = performance.now()
  let next = 0
  let opened = 0
  let failed = 0
  let firstError: string | undefined
  const lane = async () => {
    while (next < scenes.length) {
      const scene = scenes[next++] as string
      try {
        await openStream(port, scene)
        opened++
      } catch (error) {
        failed++
        firstError ??= error instanceof Error ? error.message : String(error)
      }
    }
  }
  await Promise.all(Array.from({ length: concurrency }, lane))
  const answer: ClientsOpened = { type: 'opened', opened, failed, ms: performance.now() - began }
  if (firstError !== undefined) answer.firstError = firstError
  return answer
}

function dropAll(): void {
  for (const socket of sockets) {
    // Ours, not the server's doing: take it out before its 'close' is counted.
    sockets.delete(socket)
    socket.destroy()
  }
}

function main(): void {
  const port = Number(process.argv[2])
  if (process.send === undefined || !(port > 0)) throw new Error('bench/push-clients.ts runs as a child of bench/push-connections.ts: <port>')
  process.on('message', (message: { type?: string; scenes?: string[]; concurrency?: number }) => {
    if (message.type === 'open') void openAll(port, message.scenes ?? [], message.concurrency ?? 100).then((answer) => process.send?.(answer))
    if (message.type === 'stats') process.send?.({ type: 'stats', heartbeats, endedByServer, open: sockets.size } satisfies ClientStats)
    if (message.type === 'drop') {
      dropAll()
      process.send?.({ type: 'dropped' })
    }
    if (message.type === 'close') process.disconnect()
  })
  process.on('disconnect', () => {
    dropAll()
    process.exit(0)
  })
  process.send({ type: 'ready' })
}

main()
