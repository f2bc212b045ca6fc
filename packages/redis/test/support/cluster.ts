/**
 * A real three-master Redis Cluster on loopback ports, for the tests: started from the
 * `redis-server` and `redis-cli` on PATH in a temporary directory, stopped with SHUTDOWN NOSAVE,
 * the directory deleted afterwards.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { Cluster, Redis, type ClusterOptions } from 'ioredis'

const run = promisify(execFile)

/** A running test cluster. */
export interface TestCluster {
  /** The masters' ports. */
  ports: number[]
  /** A new Cluster client (the caller quits it), with `options` if given. */
  connect(options?: ClusterOptions): Cluster
  /** Shuts every node down and deletes the directory. */
  stop(): Promise<void>
}

/** Whether nothing listens on 127.0.0.1:`port`. */
function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer()
    server.once('error', () => resolve(false))
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)))
  })
}

/** `count` ports from `first` on, each free together with its cluster bus port (port + 10000). */
async function freePorts(first: number, count: number): Promise<number[]> {
  const ports: number[] = []
  for (let port = first; ports.length < count && port < first + 2000; port++) {
    if ((await isFree(port)) && (await isFree(port + 10000))) ports.push(port)
  }
  if (ports.length < count) throw new Error(`no ${count} free ports from ${first}`)
  return ports
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Starts three masters (ports from 7101 on), joins them into a cluster and waits for cluster_state:ok. */
export async function startCluster(firstPort = 7101): Promise<TestCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'scanauth-cluster-'))
  const ports = await freePorts(firstPort, 3)
  // The nodes run as children of this process rather than daemonized, so their exit is reaped
  // here (a daemon's parent is init, which does not reap in every container).
  const nodes: ChildProcess[] = []
  let spawnError: Error | undefined
  const stop = async () => {
    await Promise.all(
      nodes.map(async (node, i) => {
        if (node.pid === undefined || node.exitCode !== null || node.signalCode !== null) return
        const exited = once(node, 'exit')
        await run('redis-cli', ['-p', String(ports[i]), 'SHUTDOWN', 'NOSAVE']).catch(() => undefined)
        // A node that did not answer SHUTDOWN is killed by its pid (a process this file started).
        const timer = setTimeout(() => node.kill('SIGKILL'), 5000)
        await exited
        clearTimeout(timer)
      }),
    )
    await rm(dir, { recursive: true, force: true })
  }
  try {
    for (const port of ports) {
      const node = spawn('redis-server', [
        '--port', String(port),
        '--bind', '127.0.0.1',
        '--cluster-enabled', 'yes',
        '--cluster-config-file', join(dir, `nodes-${port}.conf`),
        '--cluster-node-timeout', '5000',
        '--save', '',
        '--appendonly', 'no',
        '--daemonize', 'no',
        '--logfile', join(dir, `redis-${port}.log`),
        '--dir', dir,
      ], { stdio: 'ignore' })
      // A missing binary is reported when waiting for the node, not as an unhandled 'error' event.
      node.on('error', (error) => {
        spawnError ??= error
      })
      nodes.push(node)
    }
    await waitFor(async () => {
      if (spawnError) throw new Error(`redis-server could not start: ${spawnError.message}`)
      return (await Promise.all(ports.map((p) => ping(p)))).every(Boolean)
    }, 'nodes to start')
    await run('redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes'])
    await waitFor(async () => (await Promise.all(ports.map((p) => clusterOk(p)))).every(Boolean), 'cluster_state:ok')
  } catch (error) {
    await stop()
    throw error
  }
  return {
    ports,
    connect: (options) => new Cluster(ports.map((port) => ({ host: '127.0.0.1', port })), options),
    stop,
  }
}

async function ping(port: number): Promise<boolean> {
  const result = await run('redis-cli', ['-p', String(port), 'PING']).catch(() => ({ stdout: '' }))
  return result.stdout.trim() === 'PONG'
}

async function clusterOk(port: number): Promise<boolean> {
  const node = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 1 })
  try {
    await node.connect()
    return (await node.cluster('INFO')).includes('cluster_state:ok')
  } catch {
    return false
  } finally {
    node.disconnect()
  }
}

async function waitFor(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    if (await check()) return
    await pause(100)
  }
  throw new Error(`timed out waiting for ${what}`)
}
