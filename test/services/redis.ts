/**
 * Redis for the tests: whether a server answers at a URL (PING, after AUTH when the URL has a
 * password), and a throwaway `redis-server` on a free loopback port, without persistence, its
 * directory and log in `dir`.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import { connect, type Socket } from 'node:net'
import { connect as connectTls } from 'node:tls'
import { freePort, pause, tail } from './processes'
import type { Probe, ThrowawayServer } from './types'

/** The Redis the tests use when `REDIS_URL` is not set. */
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379'

/** One RESP command. */
function command(...args: string[]): string {
  return `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`
}

/** Whether a Redis at `url` answers PING (within `timeoutMs`). */
export function probeRedis(url: string, timeoutMs = 2000): Promise<Probe> {
  let u: URL
  try {
    u = new URL(url)
  } catch {
    return Promise.resolve({ ok: false, reason: 'it is not a URL' })
  }
  const host = u.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1'
  const port = Number(u.port || 6379)
  const commands = [
    ...(u.password ? [u.username ? command('AUTH', decodeURIComponent(u.username), decodeURIComponent(u.password)) : command('AUTH', decodeURIComponent(u.password))] : []),
    command('PING'),
  ]
  return new Promise((resolve) => {
    let settled = false
    let received = ''
    const socket: Socket = u.protocol === 'rediss:' ? connectTls({ host, port, servername: host }) : connect({ host, port })
    const finish = (probe: Probe) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      socket.destroy()
      resolve(probe)
    }
    const timer = setTimeout(() => finish({ ok: false, reason: `no answer within ${timeoutMs} ms` }), timeoutMs)
    socket.once(u.protocol === 'rediss:' ? 'secureConnect' : 'connect', () => socket.write(commands.join('')))
    socket.on('data', (chunk) => {
      received += chunk.toString('utf8')
      const lines = received.split('\r\n').slice(0, -1)
      const error = lines.find((line) => line.startsWith('-'))
      if (error) finish({ ok: false, reason: `it answered ${error.slice(1)}` })
      else if (lines.length >= commands.length) finish(lines.at(-1) === '+PONG' ? { ok: true } : { ok: false, reason: `it answered ${lines.at(-1)} to PING` })
    })
    socket.on('error', (error: NodeJS.ErrnoException) => finish({ ok: false, reason: error.message || String(error.code) }))
    socket.on('close', () => finish({ ok: false, reason: 'it closed the connection' }))
  })
}

/** Starts `redis-server` (found on PATH) on a free port of 127.0.0.1, in `dir`; throws with its log when it does not come up. */
export async function startRedis(dir: string): Promise<ThrowawayServer> {
  let lastError: Error | undefined
  // A port taken between freePort() and the server's bind makes the server exit: another port then.
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort()
    const log = join(dir, `redis-${port}.log`)
    const child = spawn('redis-server', [
      '--port', String(port),
      '--bind', '127.0.0.1',
      '--save', '',
      '--appendonly', 'no',
      '--daemonize', 'no',
      '--dir', dir,
      '--logfile', log,
    ], { stdio: 'ignore' })
    let exited = false
    let spawnError: Error | undefined
    child.on('error', (error) => (spawnError = error))
    child.once('exit', () => (exited = true))
    const url = `redis://127.0.0.1:${port}`
    for (let i = 0; i < 100 && !exited && !spawnError; i++) {
      if ((await probeRedis(url, 500)).ok) {
        return {
          url,
          kill() {
            if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
          },
          async stop() {
            if (child.exitCode !== null || child.signalCode !== null) return
            const done = once(child, 'exit')
            child.kill('SIGTERM') // Redis shuts down on SIGTERM; with --save '' it writes nothing
            const timer = setTimeout(() => child.kill('SIGKILL'), 5000)
            await done
            clearTimeout(timer)
          },
        }
      }
      await pause(50)
    }
    if (!exited && child.exitCode === null) child.kill('SIGKILL')
    lastError = spawnError ?? new Error(`redis-server on port ${port} did not come up${exited ? ' (it exited)' : ' within 5 s'}:\n${tail(log)}`)
  }
  throw lastError
}
