/**
 * Many waiting devices held by one process: `connections` event streams (`GET /auth/events`,
 * docs/behaviour.md B-wait-3), each on a scene of its own, all pending, held by one Express app on a
 * `MemoryStore` (`bench/push-server.ts`, a child with `--expose-gc`), opened and held by another
 * child (`bench/push-clients.ts`): the server's figures are its own, not the load generator's.
 *
 * Each measurement is made twice, in fresh processes: on scanauth, and on a bare Express route that
 * holds the same streams with the least work (the baseline, see `bench/push-server.ts`).
 *
 * Memory per waiting connection: the server's `process.memoryUsage()` after two full collections
 * with every stream open, minus the same before any was opened (the scenes already created, and a
 * few hundred streams opened and closed first so that lazily compiled code and caches are in the
 * baseline), divided by the number of connections; heap and RSS. It is everything a waiting device
 * costs the server: the socket and its HTTP parser, Express's request and response, the handler's
 * stream, the waiter and its timer. Idle CPU: the server's `process.cpuUsage()` over one heartbeat
 * period (15 s) while nothing changes, so that every stream's heartbeat — the wait's timeout, a
 * store read and a comment written — is counted once.
 *
 * @module
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { ask, startChild, stopChild } from './child'
import type { ClientsOpened, ClientStats } from './push-clients'
import type { PushServerReady, ServerMemory } from './push-server'

/** What one server held and cost. */
export interface HeldStreams {
  /** Seconds the client took to open them all. */
  openSeconds: number
  /** Growth per connection after collection, bytes. */
  heapBytesPerConnection: number
  rssBytesPerConnection: number
  /** `external` (buffers outside the heap) per connection, bytes. */
  externalBytesPerConnection: number
  /** Server CPU while the streams wait, % of one core, over `idleSeconds`. */
  idleCpuPercent: number
  idleSeconds: number
  /** Heartbeat comments the clients received during that time. */
  heartbeats: number
}

/** What {@link benchConnections} found. */
export interface ConnectionsResult {
  /** Waiting streams held at once (all pending, each on its own scene). */
  connections: number
  /** `scanAuthRouter` on a MemoryStore. */
  scanauth: HeldStreams
  /** The baseline: a bare Express route holding the same streams (see `bench/push-server.ts`). */
  bare: HeldStreams
  /** The goal per waiting connection, bytes (20 KB). */
  targetBytesPerConnection: number
  /** The open-files limit the children ran with, when it had to be raised above the inherited one. */
  raisedOpenFiles?: number
}

/** Options of {@link benchConnections}. */
export interface BenchConnectionsOptions {
  /** Streams to hold. Default 10,000. */
  connections?: number
  /** Seconds over which idle CPU is measured. Default 15 (one heartbeat period). */
  idleSeconds?: number
}

/** Streams opened and closed before the baseline. */
const WARM_UP = 300
/** Streams being set up at once. */
const CONCURRENCY = 200
/** The goal of issue #13: at most 20 KB per waiting connection. */
export const CONNECTION_TARGET_BYTES = 20 * 1024

/** Holds `connections` streams on a server of `mode` and measures it; stops both children whatever happens. */
async function holdStreams(mode: 'scanauth' | 'bare', connections: number, idleSeconds: number): Promise<HeldStreams & { raisedOpenFiles?: number }> {
  // Sockets, plus room for the process's own files; the server also holds the listening socket.
  const openFiles = connections + 1024
  const server = await startChild<PushServerReady>('push-server.ts', [String(connections + WARM_UP), mode], { nodeFlags: ['--expose-gc'], openFiles })
  try {
    const clients = await startChild<{ type: 'ready' }>('push-clients.ts', [String(server.ready.port)], { openFiles })
    try {
      const scenes = server.ready.scenes
      const memory = () => ask<ServerMemory>(server.child, { type: 'memory' }, 'memory')
      const open = async (list: string[]) => {
        const opened = await ask<ClientsOpened>(clients.child, { type: 'open', scenes: list, concurrency: CONCURRENCY }, 'opened')
        if (opened.failed > 0) throw new Error(`push bench (${mode}): ${opened.failed} of ${list.length} streams failed (${opened.firstError})`)
        return opened
      }

      await open(scenes.slice(connections))
      await ask(clients.child, { type: 'drop' }, 'dropped')
      // The server notices each close, ends the stream's wait and lets the socket go.
      let baseline = await memory()
      for (let tries = 0; baseline.connections > 0 && tries < 100; tries++) {
        await sleep(100)
        baseline = await memory()
      }
      if (baseline.connections > 0) throw new Error(`push bench (${mode}): ${baseline.connections} connections still open after the warm-up`)

      const opened = await open(scenes.slice(0, connections))
      await sleep(1000)
      const held = await memory()
      if (held.connections !== connections) throw new Error(`push bench (${mode}): the server holds ${held.connections} connections, not ${connections}`)

      const cpu = async () => (await ask<{ type: 'cpu'; usage: NodeJS.CpuUsage }>(server.child, { type: 'cpu' }, 'cpu')).usage
      const stats = () => ask<ClientStats>(clients.child, { type: 'stats' }, 'stats')
      const [cpuBefore, statsBefore] = [await cpu(), await stats()]
      const began = performance.now()
      await sleep(idleSeconds * 1000)
      const [cpuAfter, statsAfter] = [await cpu(), await stats()]
      const wallMs = performance.now() - began
      if (statsAfter.open !== connections) throw new Error(`push bench (${mode}): ${connections - statsAfter.open} streams ended while waiting`)

      const per = (after: number, before: number) => (after - before) / connections
      const cpuUs = cpuAfter.user + cpuAfter.system - cpuBefore.user - cpuBefore.system
      const result: HeldStreams & { raisedOpenFiles?: number } = {
        openSeconds: opened.ms / 1000,
        heapBytesPerConnection: per(held.heapUsed, baseline.heapUsed),
        rssBytesPerConnection: per(held.rss, baseline.rss),
        externalBytesPerConnection: per(held.external, baseline.external),
        idleCpuPercent: (cpuUs / 1000 / wallMs) * 100,
        idleSeconds: wallMs / 1000,
        heartbeats: statsAfter.heartbeats - statsBefore.heartbeats,
      }
      const raised = server.raisedOpenFiles ?? clients.raisedOpenFiles
      if (raised !== undefined) result.raisedOpenFiles = raised
      return result
    } finally {
      await stopChild(clients.child)
    }
  } finally {
    await stopChild(server.child)
  }
}

/** Holds the streams on the bare route, then on scanauth, each in fresh processes. */
export async function benchConnections(options: BenchConnectionsOptions = {}): Promise<ConnectionsResult> {
  const { connections = 10_000, idleSeconds = 15 } = options
  const { raisedOpenFiles, ...bare } = await holdStreams('bare', connections, idleSeconds)
  const { raisedOpenFiles: raised, ...scanauth } = await holdStreams('scanauth', connections, idleSeconds)
  const result: ConnectionsResult = { connections, scanauth, bare, targetBytesPerConnection: CONNECTION_TARGET_BYTES }
  if ((raisedOpenFiles ?? raised) !== undefined) result.raisedOpenFiles = (raisedOpenFiles ?? raised) as number
  return result
}

/** The result as a Markdown table: scanauth, the bare route, and what scanauth adds. */
export function connectionsTable(r: ConnectionsResult): string {
  const n = (x: number, digits = 0) => x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
  const kb = (bytes: number) => `${n(bytes / 1024, 1)} KB`
  const line = (name: string, h: HeldStreams, goal: string) =>
    `| ${name} | ${n(r.connections)} | ${n(h.openSeconds, 1)} s | ${kb(h.heapBytesPerConnection)} | ${kb(h.rssBytesPerConnection)} | ` +
    `${kb(h.externalBytesPerConnection)} | ${n(h.idleCpuPercent, 1)}% over ${n(h.idleSeconds, 1)} s | ${n(h.heartbeats)} | ${goal} |`
  const ours = r.scanauth
  const met = (bytes: number) => (bytes <= r.targetBytesPerConnection ? '✓' : '✗')
  const goal = `≤ ${kb(r.targetBytesPerConnection)}: heap ${met(ours.heapBytesPerConnection)}, RSS ${met(ours.rssBytesPerConnection)}`
  return [
    '| server | waiting streams | opened in | heap per stream | RSS per stream | external per stream | server CPU while idle (% of a core) | heartbeats in that time | goal |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---|',
    line('`scanAuthRouter`, MemoryStore', ours, goal),
    line('bare Express route', r.bare, ''),
    `| scanauth adds | | | ${kb(ours.heapBytesPerConnection - r.bare.heapBytesPerConnection)} | ${kb(ours.rssBytesPerConnection - r.bare.rssBytesPerConnection)} | | ` +
      `${n(ours.idleCpuPercent - r.bare.idleCpuPercent, 1)} points | | |`,
  ].join('\n')
}
