/**
 * The server's view of the workers' connections, found by the `application_name` their pools set:
 * how many there are, and terminating them (`pg_terminate_backend`). A name unique to one test
 * keeps every other connection on the server (other tests, other packages' runs) out of reach.
 */
import type pg from 'pg'
import { eventually } from '@scanauth/testkit'

/** The backends connected under `applicationName`. */
export async function backendsOf(pool: pg.Pool, applicationName: string): Promise<number> {
  const { rows } = await pool.query<{ n: number }>('SELECT count(*)::integer AS n FROM pg_stat_activity WHERE application_name = $1', [applicationName])
  return rows[0]?.n ?? 0
}

/** What terminating our backends did: how many it ended, and how many of those were running a statement. */
export interface Terminated {
  terminated: number
  active: number
}

/**
 * Terminates every backend connected under `applicationName`, whatever it is doing: idle, or in
 * the middle of a statement (a commit, which then rolls back whole). `active` counts those that
 * pg_stat_activity showed running a statement.
 */
export async function terminateBackends(pool: pg.Pool, applicationName: string): Promise<Terminated> {
  const { rows } = await pool.query<Terminated>(
    `SELECT count(*) FILTER (WHERE ended)::integer AS terminated, count(*) FILTER (WHERE ended AND state = 'active')::integer AS active
     FROM (SELECT pg_terminate_backend(pid) AS ended, state FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()) AS ours`,
    [applicationName],
  )
  return rows[0] ?? { terminated: 0, active: 0 }
}

/**
 * Terminates the backends of `applicationName` again and again (the workers reconnect in between)
 * until at least one of them was cut off in the middle of a statement; returns the totals.
 */
export async function terminateMidStatement(pool: pg.Pool, applicationName: string): Promise<Terminated> {
  const total: Terminated = { terminated: 0, active: 0 }
  await eventually(`a backend of ${applicationName} terminated while running a statement`, async () => {
    const round = await terminateBackends(pool, applicationName)
    total.terminated += round.terminated
    total.active += round.active
    return total.active > 0
  })
  return total
}

/**
 * Resolves once no backend is connected under `applicationName`: after a client process is killed,
 * its backends may still be finishing a statement, and only then is what they did final.
 */
export function noBackendsLeft(pool: pg.Pool, applicationName: string): Promise<void> {
  return eventually(`the backends of ${applicationName} to end`, async () => (await backendsOf(pool, applicationName)) === 0)
}
