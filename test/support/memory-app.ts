/**
 * The Express example in a process of its own, for the memory check of `test/fuzz.test.ts`. Run with
 * `node --expose-gc --import tsx --conditions=@scanauth/source test/support/memory-app.ts` and an
 * IPC channel: it sends `{ ready: url }` once it listens (MemoryStore, emulator mode, 127.0.0.1), and
 * answers `'measure'` with `{ memory }` (`process.memoryUsage()` after full garbage collections) and
 * the number of errors the app logged, and `'stop'` by closing and exiting. It exits when the parent
 * goes away, too.
 */
import { startServer } from '../../examples/express/src/app'

/** What the process reports for `'measure'`. */
export interface MemoryReport {
  memory: NodeJS.MemoryUsage
  /** Log lines about an error (a 500 or a failing callback): none is expected from input. */
  errorLines: number
}

if (typeof gc !== 'function') throw new Error('run with node --expose-gc')
const collect = gc
const send = (message: unknown) => process.send?.(message)

let errorLines = 0
const running = await startServer({
  port: 0,
  host: '127.0.0.1',
  store: { kind: 'memory' },
  wechat: { kind: 'emulator' },
  // Kept out of the measurement: a log that grows would be the test's doing, not the app's.
  log: (line) => {
    if (/internal error|error on |callback error/.test(line)) errorLines++
  },
})

process.on('message', (message) => {
  if (message === 'measure') {
    // Several rounds: objects freed by one collection can release others in the next.
    for (let i = 0; i < 4; i++) collect()
    send({ memory: process.memoryUsage(), errorLines } satisfies MemoryReport)
  } else if (message === 'stop') {
    void running.close().finally(() => process.exit(0))
  }
})
process.on('disconnect', () => void running.close().finally(() => process.exit(0)))
send({ ready: running.url })
