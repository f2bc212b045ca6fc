/**
 * The small part of autocannon's API the HTTP benchmark uses (autocannon ships no types).
 */
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events'

  /** Options of one run. */
  export interface AutocannonOptions {
    url: string
    connections?: number
    pipelining?: number
    /** Seconds. */
    duration?: number
    /** Stop after this many requests (overrides `duration`). */
    amount?: number
    /** Stop after this many requests in all, or when `duration` is over, whichever comes first. */
    maxOverallRequests?: number
    /** Seconds before a request times out. */
    timeout?: number
    method?: string
    headers?: Record<string, string>
  }

  /** Latency figures of a run, in milliseconds (integer resolution). */
  export interface AutocannonLatency {
    p50: number
    p99: number
    average: number
    max: number
  }

  /** What a run resolves to. */
  export interface AutocannonResult {
    duration: number
    errors: number
    timeouts: number
    non2xx: number
    latency: AutocannonLatency
    requests: { total: number; average: number; sent: number }
  }

  /** A running job: `response` events carry `(client, statusCode, bytes, responseTimeMs)`. */
  export interface AutocannonInstance extends EventEmitter, PromiseLike<AutocannonResult> {
    stop(): void
  }

  export default function autocannon(options: AutocannonOptions): AutocannonInstance
}
