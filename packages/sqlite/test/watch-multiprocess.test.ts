// Change notification across processes on one SQLite file (docs/behaviour.md B-wait-1, B-wait-4):
// a worker process (workers/load-worker.ts, its own SqliteStore) scans, and this process, which
// committed nothing, learns of it through the change log the worker's commit wrote.
import { describe, expect, it } from 'vitest'
import { SECOND } from './support/fixture'
import { useWorkerFleet } from './support/fleet'
import { eventually, told, within } from '@scanauth/testkit'

const fleet = useWorkerFleet()

describe('watchScenes across processes', () => {
  it('tells a listener in this process of a scan committed by another process', { timeout: 60_000 }, async () => {
    const { workers, t0, parent, auth } = await fleet.start(1)
    const [worker] = workers
    try {
      const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
      const heard: string[] = []
      const stop = parent.watchScenes((s) => heard.push(s))
      const report = await worker?.run({ kind: 'scan', now: t0 + SECOND, tasks: [{ sceneStr, openid: 'alice' }] })
      expect(report?.processed).toEqual([expect.objectContaining({ sceneStr, openid: 'alice' })])
      await told(heard, sceneStr)
      stop()
      expect(parent.watching).toBe(false)
    } finally {
      await parent.close()
    }
  })

  it('wakes waitForStatus in this process with a scan committed by another process', { timeout: 60_000 }, async () => {
    const { workers, t0, parent, auth } = await fleet.start(1)
    const [worker] = workers
    try {
      const { sceneStr } = await auth.createScene({ deviceId: 'tv' })
      // A wait far longer than the test: only the notification can end it in time.
      const waiting = auth.waitForStatus(sceneStr, { timeoutMs: 600_000 })
      // The wait has subscribed (and made its first read) before the other process scans.
      await eventually('the wait to subscribe', () => parent.watching)
      expect(await auth.getStatus(sceneStr)).toEqual({ status: 'pending' })
      await worker?.run({ kind: 'scan', now: t0 + SECOND, tasks: [{ sceneStr, openid: 'alice' }] })
      expect(await within(waiting, 'the wait to end')).toMatchObject({ status: 'authorized', sessionToken: expect.any(String) })
      // Nothing is left behind once the wait is over (B-wait-4).
      expect(parent.watching).toBe(false)
    } finally {
      await parent.close()
    }
  })
})
