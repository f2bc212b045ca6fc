/**
 * The example server on PostgreSQL (`SCANAUTH_STORE=postgres`), the same for Express and Koa: the
 * flow in a schema of its own, a restart, a waiting device woken through LISTEN, a purchase paid
 * with the WeChat Pay emulator, the pool ended on close, and start-up failures that name the variable to change.
 * Real sockets, the emulator in-process, the test server at `DATABASE_URL`, a schema per test
 * dropped afterwards.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { SCHEMA_VERSION } from '@scanauth/postgres'
import { closedPort, createPendingScene, eventually, fetchJson, pollAuthorized, postJson, within } from '@scanauth/testkit'
import { ConfigError, type ExampleConfig } from '../src/config'
import type { RunningServer } from '../src/serve'
import type { StartServer } from './app-suite'
import { freshName, TEST_DATABASE_URL, testDatabase, withApplicationName, withCredentials } from './postgres-support'

/**
 * The deadline for the server to see a pool's connections gone. node-postgres closes an idle
 * connection by itself after 10 s (`idleTimeoutMillis`), so only a deadline well under that tells a
 * pool that was ended from one that was merely left alone.
 */
const CLOSED_WITHIN_MS = 3_000

/** Registers the PostgreSQL suite for `framework`, run against its `startServer`. */
export function describeExampleOnPostgres(framework: 'express' | 'koa', startServer: StartServer): void {
  describe(`the ${framework} example server on PostgreSQL`, () => {
    const database = testDatabase()
    const running: RunningServer[] = []
    afterEach(async () => {
      await Promise.all(running.splice(0).map((r) => r.close()))
      await database.cleanup()
    })
    afterAll(() => database.end())

    /**
     * Starts on PostgreSQL in `schema` (a fresh one unless given), its connections named
     * `applicationName` (a fresh one unless given) through DATABASE_URL, so the server's view of
     * them can be read.
     */
    async function start(options: { schema?: string; url?: string; applicationName?: string; overrides?: Partial<ExampleConfig> } = {}) {
      const schema = options.schema ?? database.schema()
      const applicationName = options.applicationName ?? freshName('scanauth_example_app')
      const lines: string[] = []
      const server = await startServer({
        port: 0,
        host: '127.0.0.1',
        store: { kind: 'postgres', url: withApplicationName(options.url ?? TEST_DATABASE_URL, applicationName), schema },
        wechat: { kind: 'emulator' },
        log: (line) => lines.push(line),
        ...options.overrides,
      })
      running.push(server)
      return { server, url: server.url, schema, applicationName, log: () => lines.join('\n') }
    }

    async function signIn(url: string, server: RunningServer, openid: string): Promise<{ scene: string; token: string }> {
      const scene = (await createPendingScene(url, `${framework}-pg-device`)).scene_str as string
      expect((await server.wiring.emulator!.scan({ sceneStr: scene, openid })).status).toBe(200)
      return { scene, token: (await pollAuthorized(url, scene)).token }
    }

    it('runs the flow in the schema it creates, keeps it across a restart, and ends its pool on close', async () => {
      const first = await start()
      expect(first.log()).toContain(`store postgres postgres://`)
      expect(first.log()).toContain(`(schema ${first.schema}) (purge every 60 min), WeChat emulator`)
      expect((await fetchJson(`${first.url}/demo/config`)).body).toEqual({ framework, store: 'postgres', emulator: true, demo_openid: 'o_emulator_demo_user', pay_emulator: true, phone_pay: true, confirm: 'scan', reminders: false })
      const { scene, token } = await signIn(first.url, first.server, 'o_pg_user')
      expect((await fetchJson(`${first.url}/auth/session`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200)

      // Migrated at start, and the records are in that schema.
      const s = `"${first.schema}"`
      expect((await database.pool.query(`SELECT max(version) AS v FROM ${s}.scanauth_schema_migrations`)).rows).toEqual([{ v: SCHEMA_VERSION }])
      expect((await database.pool.query(`SELECT token FROM ${s}.scanauth_sessions`)).rows).toEqual([{ token }])

      // Closing ends the example's pool: none of its connections stay open on the server.
      expect((await database.connections(first.applicationName)).length).toBeGreaterThan(0)
      await first.server.close()
      await eventually('the example pool’s connections to close', async () => (await database.connections(first.applicationName)).length === 0, CLOSED_WITHIN_MS)

      const second = await start({ schema: first.schema })
      expect((await fetchJson(`${second.url}/auth/status?scene=${scene}`)).body).toMatchObject({ status: 'authorized', session_token: token })
      expect((await fetchJson(`${second.url}/auth/session`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200)
    })

    it('answers a long poll when the scan commits, heard by LISTEN on one client of its pool, given back afterwards', async () => {
      const { server, url, applicationName } = await start()
      const scene = (await createPendingScene(url, `${framework}-pg-waiting`)).scene_str as string
      const listening = async () => (await database.connections(applicationName)).some((c) => c.query.startsWith('LISTEN '))
      const polling = fetchJson(`${url}/auth/status?scene=${scene}&wait=30`)
      await eventually('the store to LISTEN on a client of the example pool', listening)

      expect((await server.wiring.emulator!.scan({ sceneStr: scene, openid: 'o_pg_waiting' })).status).toBe(200)
      // Only the notification answers it this soon: wait=30 outlasts `within`'s deadline.
      const answer = await within(polling, 'the long poll to answer after the scan')
      expect(answer.body).toMatchObject({ status: 'authorized', session_token: expect.any(String) })
      await eventually('the LISTEN client to be given back', async () => !(await listening()))
    })

    it('sells a plan: purchase, the emulated payment, and a long poll on the need_purchase scene answered authorized', async () => {
      let ahead = 0
      const { server, url } = await start({ overrides: { freeTrialDays: 0.0007, now: () => Date.now() + ahead } })
      await signIn(url, server, 'o_pg_buyer')
      ahead += 61_000 // past the free trial of about a minute
      const scene = (await createPendingScene(url, `${framework}-pg-buyer`)).scene_str as string
      expect((await server.wiring.emulator!.scan({ sceneStr: scene, openid: 'o_pg_buyer' })).status).toBe(200)
      expect((await fetchJson(`${url}/auth/status?scene=${scene}`)).body).toEqual({ status: 'need_purchase' })

      const order = await postJson(`${url}/auth/purchase`, { scene, plan: 'days-7' })
      expect(order).toMatchObject({ status: 200, body: { amount_fen: 690, code_url: expect.stringMatching(/^weixin:\/\/wxpay\//) } })
      // With an order of the scene open, need_purchase is not final: the long poll waits for the payment.
      const polling = fetchJson(`${url}/auth/status?scene=${scene}&wait=30`)
      expect((await postJson(`${url}/demo/pay`, { order_id: order.body.order_id })).status).toBe(200)
      const answer = await within(polling, 'the long poll to answer after the payment')
      expect(answer.body).toMatchObject({ status: 'authorized', authorization: { type: 'time' } })
      const grants = (await server.wiring.auth.listLedger({ openid: 'o_pg_buyer' })).entries.filter((e) => e.kind === 'grant' && e.source === 'purchase')
      expect(grants).toEqual([expect.objectContaining({ idempotencyKey: `order:${order.body.order_id}` })])
    })

    it('stops the start naming DATABASE_URL without its password, and what to do, when PostgreSQL does not answer', async () => {
      const port = await closedPort()
      // node-postgres takes the password in the user part or as a query parameter: neither is shown.
      for (const [url, shown] of [
        [`postgres://scanauth:s3cret-pw@127.0.0.1:${port}/test`, `postgres://scanauth:***@127.0.0.1:${port}/test?application_name=`],
        [`postgres://scanauth@127.0.0.1:${port}/test?password=s3cret-pw`, `postgres://scanauth@127.0.0.1:${port}/test?password=***&application_name=`],
      ]) {
        const message = await start({ url }).then(
          () => 'started',
          (error: unknown) => (error instanceof ConfigError ? error.message : `not a ConfigError: ${String(error)}`),
        )
        expect(message.startsWith(`cannot reach PostgreSQL at ${shown}`), message).toBe(true)
        expect(message).toMatch(/ \(DATABASE_URL\): connect ECONNREFUSED .*; start PostgreSQL there, or set DATABASE_URL to a server that answers$/)
        expect(message).not.toContain('s3cret-pw')
      }
    })

    it('says the server refused the connection, for a database that does not exist', async () => {
      const url = new URL(TEST_DATABASE_URL)
      url.pathname = '/scanauth_no_such_database'
      const failed = start({ url: url.toString() })
      await expect(failed).rejects.toThrow(ConfigError)
      await expect(failed).rejects.toThrow(/refused the connection: database "scanauth_no_such_database" does not exist; check the user, password and database name in DATABASE_URL$/)
    })

    it('names SCANAUTH_PG_SCHEMA and the grant to give when the role may not create the schema', async () => {
      const role = await database.roleWithoutCreate()
      const schema = database.schema()
      const failed = start({ url: withCredentials(TEST_DATABASE_URL, role), schema })
      await expect(failed).rejects.toThrow(ConfigError)
      await expect(failed).rejects.toThrow(
        new RegExp(`refused to create the scanauth tables in schema ${schema} \\(SCANAUTH_PG_SCHEMA\\): permission denied .*; grant the role CREATE on that schema`),
      )
    })

    it('refuses a schema written by a newer release, naming SCANAUTH_PG_SCHEMA, and leaves no connection open', async () => {
      const first = await start()
      await first.server.close()
      await database.pool.query(`INSERT INTO "${first.schema}".scanauth_schema_migrations (version, name) VALUES ($1, 'from the future')`, [SCHEMA_VERSION + 1])
      const applicationName = freshName('scanauth_example_app')
      const failed = start({ schema: first.schema, applicationName })
      await expect(failed).rejects.toThrow(ConfigError)
      await expect(failed).rejects.toThrow(`schema ${first.schema} (SCANAUTH_PG_SCHEMA): [@scanauth/postgres] schema ${first.schema} is at version ${SCHEMA_VERSION + 1}`)
      await eventually('the failed start’s connections to close', async () => (await database.connections(applicationName)).length === 0, CLOSED_WITHIN_MS)
    })
  })
}
