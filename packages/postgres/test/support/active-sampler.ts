/**
 * "At most one active authorization per user" (B-act-3) must hold at every moment, not only once
 * the load is over: this reads the table again and again while the load runs, each read one
 * statement and so one consistent view, and keeps every user it ever saw with two or more active.
 */
import type pg from 'pg'

/** What the sampling saw: how many reads it made, and every violation found (user and active count). */
export interface ActiveSamples {
  reads: number
  violations: Array<{ userId: number; active: number }>
}

/** Samples the schema's active authorizations until `work` settles; resolves with `work`'s value and the samples. */
export async function sampleActiveWhile<T>(pool: pg.Pool, schema: string, work: Promise<T>): Promise<{ value: T; samples: ActiveSamples }> {
  const samples: ActiveSamples = { reads: 0, violations: [] }
  let settled = false
  const sampling = (async () => {
    while (!settled) {
      const { rows } = await pool.query<{ user_id: number; active: number }>(
        `SELECT user_id::integer AS user_id, count(*)::integer AS active FROM "${schema}".scanauth_authorizations
         WHERE status = 'active' GROUP BY user_id HAVING count(*) > 1`,
      )
      samples.reads++
      samples.violations.push(...rows.map((r) => ({ userId: r.user_id, active: r.active })))
    }
  })()
  try {
    const value = await work
    return { value, samples }
  } finally {
    settled = true
    await sampling
  }
}
