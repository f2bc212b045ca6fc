/**
 * A TCP proxy in front of the real Redis that can lose one reply on purpose: once armed with a
 * marker, it forwards the next request containing the marker to Redis (so Redis executes it), then
 * closes the client's connection instead of forwarding the reply. That is the one fault a
 * `CLIENT KILL` can only hit by luck: a command applied whose reply never arrives.
 */
import { connect as tcpConnect, createServer, type AddressInfo, type Server, type Socket } from 'node:net'

/** A running proxy. */
export interface ReplyDroppingProxy {
  /** The port to point a client at. */
  port: number
  /** Drops the reply of the next request that contains `marker`, closing that connection. */
  dropReplyTo(marker: string): void
  /** How many replies were dropped so far. */
  dropped(): number
  close(): Promise<void>
}

/** Starts a proxy on a free loopback port forwarding to `target`. */
export async function startProxy(target: { host: string; port: number }): Promise<ReplyDroppingProxy> {
  let marker: string | null = null
  let dropped = 0
  const sockets = new Set<Socket>()
  const server: Server = createServer((downstream) => {
    const upstream = tcpConnect(target.port, target.host)
    sockets.add(downstream).add(upstream)
    let dropNextReply = false
    const closeBoth = () => {
      downstream.destroy()
      upstream.destroy()
    }
    downstream.on('data', (chunk) => {
      if (marker !== null && chunk.includes(marker)) {
        marker = null
        dropNextReply = true
      }
      upstream.write(chunk)
    })
    upstream.on('data', (chunk) => {
      if (dropNextReply) {
        dropped++
        closeBoth()
        return
      }
      downstream.write(chunk)
    })
    for (const socket of [downstream, upstream]) {
      socket.on('error', closeBoth)
      socket.on('close', () => {
        sockets.delete(socket)
        closeBoth()
      })
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as AddressInfo).port,
    dropReplyTo: (m) => {
      marker = m
    },
    dropped: () => dropped,
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
