/**
 * Child processes of the benchmarks: a TypeScript file of `bench/` started with tsx and an IPC
 * channel, the message it sends once it is ready, questions answered over IPC, and stopping it.
 * Servers and load generators run in processes of their own so that one does not measure the other
 * (they would share an event loop and a core).
 *
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const here = fileURLToPath(new URL('.', import.meta.url))

/** How to start a child. */
export interface ChildOptions {
  /** Extra Node flags, e.g. `--expose-gc`. */
  nodeFlags?: string[]
  /**
   * Open files the child needs (sockets count). When the soft limit (`ulimit -n`) is lower, the
   * child is started through `sh -c 'ulimit -n <n> && exec node …'`, which raises it up to the
   * hard limit (or beyond it for root); see {@link openFilesLimit}.
   */
  openFiles?: number
  /** Environment of the child. Default: this process's. */
  env?: NodeJS.ProcessEnv
}

/** A started child and the first message it sent. */
export interface StartedChild<Ready> {
  child: ChildProcess
  ready: Ready
  /** The soft limit of open files the child runs with, when it had to be raised. */
  raisedOpenFiles?: number
}

/** The soft limit of open files of this process (what a child inherits), from /proc/self/limits. */
export function openFilesLimit(): number {
  try {
    const line = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1]
    return line === undefined || line === 'unlimited' ? Number.POSITIVE_INFINITY : Number(line)
  } catch {
    return Number.POSITIVE_INFINITY
  }
}

/**
 * Starts `bench/<file>` with `args` under tsx (source conditions, as `npm run bench`) and waits for
 * its first IPC message, which it sends once it is ready. Rejects if it exits first.
 */
export async function startChild<Ready>(file: string, args: string[], options: ChildOptions = {}): Promise<StartedChild<Ready>> {
  const node = [...(options.nodeFlags ?? []), '--import', 'tsx', '--conditions=@scanauth/source', `${here}${file}`, ...args]
  const raise = options.openFiles !== undefined && openFilesLimit() < options.openFiles ? options.openFiles : undefined
  const stdio: Array<'ignore' | 'inherit' | 'ipc'> = ['ignore', 'inherit', 'inherit', 'ipc']
  // The IPC channel is a file descriptor named in the environment: it survives `sh -c … exec`.
  const child =
    raise === undefined
      ? spawn(process.execPath, node, { stdio, env: options.env })
      : spawn('/bin/sh', ['-c', `ulimit -n ${raise} && exec "$0" "$@"`, process.execPath, ...node], { stdio, env: options.env })
  const ready = await new Promise<Ready>((resolve, reject) => {
    child.once('error', reject)
    child.once('exit', (code, signal) => reject(new Error(`bench/${file} exited (${code ?? signal}) before it was ready`)))
    child.once('message', (message) => resolve(message as Ready))
  })
  child.removeAllListeners('exit')
  child.removeAllListeners('error')
  return raise === undefined ? { child, ready } : { child, ready, raisedOpenFiles: raise }
}

/** Sends `message` and resolves with the next message whose `type` is `answerType`. */
export function ask<Answer extends { type: string }>(child: ChildProcess, message: object, answerType: Answer['type']): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const onMessage = (answer: { type?: string }) => {
      if (answer?.type !== answerType) return
      child.off('message', onMessage)
      child.off('exit', onExit)
      resolve(answer as Answer)
    }
    const onExit = (code: number | null) => {
      child.off('message', onMessage)
      reject(new Error(`a benchmark child exited (${code}) before answering '${answerType}'`))
    }
    child.on('message', onMessage)
    child.once('exit', onExit)
    child.send(message)
  })
}

/** Asks the child to close (`{ type: 'close' }`) and waits for it to exit; kills it after `graceMs`. */
export async function stopChild(child: ChildProcess, graceMs = 3000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = once(child, 'exit')
  if (child.connected) child.send({ type: 'close' })
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, graceMs))])
  if (child.exitCode === null && child.signalCode === null) {
    child.kill()
    await exited
  }
}
