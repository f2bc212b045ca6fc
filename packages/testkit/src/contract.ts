/**
 * `describeStoreContract`: the one suite every scanauth store runs.
 *
 * @module
 */
import { describe } from 'vitest'
import { useContext } from './context'
import type { HarnessFactory } from './harness'
import { authorizationSuite } from './suites/authorizations'
import { concurrencySuite } from './suites/concurrency'
import { confirmSuite } from './suites/confirm'
import { idempotencySuite } from './suites/idempotency'
import { ledgerSuite } from './suites/ledger'
import { orderSuite } from './suites/orders'
import { purchaseLimitSuite } from './suites/purchase-limits'
import { purgeSuite } from './suites/purge'
import { revocationSuite } from './suites/revocation'
import { scanSuite } from './suites/scan'
import { scenePurchaseSuite } from './suites/scene-purchases'
import { phonePaySuite } from './suites/phone-pay'
import { reminderSuite } from './suites/reminders'
import { sceneSuite } from './suites/scene'
import { sessionSuite } from './suites/sessions'
import { storeApiSuite } from './suites/store-api'
import { storeCounterApiSuite } from './suites/store-api-counters'
import { storeEntitlementApiSuite } from './suites/store-api-entitlements'
import { storeOperatorReadsSuite } from './suites/store-api-operator-reads'
import { storeActiveAuthorizationsSuite } from './suites/store-api-active-authorizations'
import { storeOrderApiSuite } from './suites/store-api-orders'
import { storeSessionUserApiSuite } from './suites/store-api-session-user'
import { unicodeSuite } from './suites/unicode'
import { userSuite } from './suites/users'
import { watchSuite } from './suites/watch'

/**
 * Registers the Store contract suite for one store: the Store methods themselves (the operator
 * reads included: `listLiveSessions`, `listUsers`, `listOrders`, `schemaState`), then every row
 * of the transition tables of docs/behaviour.md, the poll decision order, the ten scan steps, FIFO,
 * the expiry boundaries, sessions and consumption, `purgeExpired`, and concurrency, all through
 * `createScanAuth` with a manual clock. Each test gets a fresh harness from `factory` and cleans it up afterwards.
 *
 * @example
 * ```ts
 * describeStoreContract('SqliteStore', async () => {
 *   const dir = await mkdtemp(join(tmpdir(), 'scanauth-'))
 *   const store = new SqliteStore({ filename: join(dir, 'db.sqlite') })
 *   return { store, openPeer: () => new SqliteStore({ filename: join(dir, 'db.sqlite') }), dump: () => readAll(dir), cleanup: () => rm(dir, { recursive: true }) }
 * })
 * ```
 */
export function describeStoreContract(name: string, factory: HarnessFactory): void {
  describe(`Store contract: ${name}`, () => {
    const get = useContext(factory)
    storeApiSuite(get)
    storeEntitlementApiSuite(get)
    storeSessionUserApiSuite(get)
    storeCounterApiSuite(get)
    storeOrderApiSuite(get)
    storeOperatorReadsSuite(get)
    storeActiveAuthorizationsSuite(get)
    sceneSuite(get)
    scanSuite(get)
    authorizationSuite(get)
    sessionSuite(get)
    idempotencySuite(get)
    ledgerSuite(get)
    revocationSuite(get)
    userSuite(get)
    watchSuite(get)
    purgeSuite(get)
    orderSuite(get)
    scenePurchaseSuite(get)
    purchaseLimitSuite(get)
    confirmSuite(get)
    phonePaySuite(get)
    reminderSuite(get)
    unicodeSuite(get)
    concurrencySuite(get)
  })
}
