/** Small helpers of the test services: free ports, finding a binary, waiting, reading a log's end. */
import { accessSync, constants, readdirSync, readFileSync, readlinkSync } from 'node:fs'
import { createServer } from 'node:net'
import { delimiter, join } from 'node:path'

/** A TCP port nothing listens on at 127.0.0.1 right now (the kernel's pick). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address ? address.port : 0
      server.close(() => resolve(port))
    })
  })
}

/** The path of the executable `name` on PATH, or undefined. */
export function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue
    const candidate = join(dir, name)
    try {
      accessSync(candidate, constants.X_OK)
      return candidate
    } catch {
      // not here
    }
  }
  return undefined
}

export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The last `lines` lines of the file at `path` ('' when it cannot be read), for error messages. */
export function tail(path: string, lines = 15): string {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n')
  } catch {
    return ''
  }
}

/** `url` with its password, if any, shown as `***`. */
export function redact(url: string): string {
  try {
    const u = new URL(url)
    if (u.password) u.password = '***'
    if (u.searchParams.has('password')) u.searchParams.set('password', '***')
    return u.toString()
  } catch {
    return url
  }
}

/** Whether the process `pid` exists (signal 0). */
export function alive(pid: number | undefined): boolean {
  if (pid === undefined) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/**
 * Linux: kills every process working in `dir` or below (servers chdir to their data directory):
 * PostgreSQL's with SIGQUIT, its immediate shutdown, which still frees its shared memory; any other
 * with SIGKILL. Elsewhere it does nothing.
 */
export function killProcessesIn(dir: string): void {
  let pids: string[]
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name))
  } catch {
    return
  }
  for (const pid of pids) {
    try {
      const cwd = readlinkSync(`/proc/${pid}/cwd`)
      if (cwd !== dir && !cwd.startsWith(`${dir}/`)) continue
      process.kill(Number(pid), readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres' ? 'SIGQUIT' : 'SIGKILL')
    } catch {
      // gone, or not ours to read
    }
  }
}
