/**
 * The worker side of {@link describePaymentProcesses}: one process with its own store connection,
 * its own `createScanAuth` selling {@link TEST_PLANS} through a real WeChat Pay client, and its own
 * notification handler, driven over IPC in `forkWorker`'s protocol. A store package's worker module
 * is one call to {@link servePaymentWorker} with the way to open its store.
 *
 * @module
 */
import { createScanAuth, type PaymentOutcome, type ProviderTransaction, type Store } from '@scanauth/core'
import { type ChangeSet, type OrderWrite } from '@scanauth/core/store'
import { TEST_PLANS } from '../suites/orders'
import type {
  CapturedNotification,
  NotificationHandlerFactory,
  PaymentCommand,
  PaymentProviderFactory,
  PaymentReport,
  PaymentWorkerSettings,
  StallPoint,
} from './payment-protocol'
import type { WorkerReply } from './worker-process'

/** A worker's own store, and how to release what opening it took. */
export interface WorkerStore {
  /** The store, on the test's backing data through a connection of this process. */
  store: Store
  /** Closes the store and what it opened (a client, a pool). */
  close(): Promise<void>
}

/** What a store package's payment worker module supplies. */
export interface PaymentWorkerOptions {
  /**
   * Opens this process's own store on the test's backing data, named by the environment the
   * parent's `PaymentBacking.env` put there; `close` releases what it opened (a client, a pool).
   */
  openStore(env: NodeJS.ProcessEnv): Promise<WorkerStore> | WorkerStore
  /** `(settings) => createWechatPayProvider(createWechatPayClient(settings))`. */
  provider: PaymentProviderFactory
  /** `createWechatPayNotificationHandler` of `@scanauth/wechat-pay`. */
  notificationHandler: NotificationHandlerFactory
}

/**
 * A pass-through to `inner` (a wrapper, not a stand-in) that counts commits and, when armed, stops
 * at a {@link StallPoint}: it calls `reached` and never sends that write, as a process killed there
 * would not. The grant's commit is recognised by what it inserts, an authorization of source
 * `purchase` (not by its idempotency key: a core that lost the key must still reach the stall, so
 * that the test goes on to find the second grant); the order's write by its new status `paid`.
 */
function stallingStore(inner: Store, counts: { commits: number; conflicts: number }, armed: () => StallPoint | null, reached: (point: StallPoint) => void): Store {
  const stall = (point: StallPoint) => {
    reached(point)
    return new Promise<never>(() => {})
  }
  const commit = async (changes: ChangeSet) => {
    if (armed() === 'grant' && changes.user?.insertAuthorizations.some((a) => a.source === 'purchase')) return stall('grant')
    counts.commits++
    const result = await inner.commit(changes)
    if (!result.ok) counts.conflicts++
    return result
  }
  const saveOrder = (write: OrderWrite) => {
    if (armed() === 'order' && write.op === 'update' && write.order.status === 'paid') return stall('order')
    return (inner.saveOrder as NonNullable<Store['saveOrder']>).call(inner, write)
  }
  return new Proxy(inner, {
    get(target, property) {
      if (property === 'commit') return commit
      if (property === 'saveOrder') return saveOrder
      // Bound to the store itself: its methods may use private fields a proxy receiver lacks.
      const value: unknown = Reflect.get(target, property, target)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}

/**
 * Runs this process as a payment worker: opens the store, answers `ready`, then carries out each
 * {@link PaymentCommand} and answers its {@link PaymentReport}. The settings come from
 * `SCANAUTH_PAYMENT_SETTINGS` (JSON {@link PaymentWorkerSettings}), which the parent sets.
 *
 * @example
 * ```ts
 * // test/workers/payment-worker.ts of a store package
 * import { createWechatPayClient, createWechatPayNotificationHandler, createWechatPayProvider } from '@scanauth/wechat-pay'
 * import { servePaymentWorker } from '@scanauth/testkit'
 * import { MyStore } from '../../src/index'
 *
 * await servePaymentWorker({
 *   openStore: (env) => {
 *     const store = new MyStore({ location: env.MY_STORE_LOCATION as string })
 *     return { store, close: () => store.close() }
 *   },
 *   provider: (settings) => createWechatPayProvider(createWechatPayClient(settings)),
 *   notificationHandler: createWechatPayNotificationHandler,
 * })
 * ```
 */
export async function servePaymentWorker(options: PaymentWorkerOptions): Promise<void> {
  const raw = process.env.SCANAUTH_PAYMENT_SETTINGS
  if (raw === undefined) throw new Error('servePaymentWorker: SCANAUTH_PAYMENT_SETTINGS is not set (fork it through describePaymentProcesses)')
  const settings = JSON.parse(raw) as PaymentWorkerSettings
  const send = (reply: WorkerReply<PaymentReport>) => process.send?.(reply)

  const report = emptyReport()
  let stallAt: StallPoint | null = null
  const { store: inner, close } = await options.openStore(process.env)
  const store = stallingStore(inner, report, () => stallAt, (point) => {
    // The parent hears of it while the handler hangs; it kills this process next.
    report.stalled = point
    send({ kind: 'done', report })
  })
  const auth = createScanAuth({
    store,
    qr: { createQr: async () => ({ url: 'https://qr.example.test/payment-worker' }) },
    payments: { provider: options.provider(settings.client), plans: TEST_PLANS },
  })
  // What core answered each notification, which the handler itself only turns into a status.
  const recording = {
    applyPayment: async (transaction: ProviderTransaction): Promise<PaymentOutcome> => {
      const outcome = await auth.applyPayment(transaction)
      report.outcomes.push(outcome)
      return outcome
    },
    applyRefund: auth.applyRefund,
  }
  const notify = options.notificationHandler({ auth: recording, verificationKeys: settings.client.verificationKeys, apiV3Key: settings.apiV3Key })
  const deliver = async (n: CapturedNotification) => (await notify({ headers: n.headers, body: Buffer.from(n.bodyBase64, 'base64') })).status

  async function handle(command: PaymentCommand): Promise<void> {
    // A fresh report per command, in the same object the store counts into.
    Object.assign(report, emptyReport())
    switch (command.kind) {
      case 'deliver':
        report.statuses = await Promise.all(command.notifications.map(deliver))
        return void send({ kind: 'done', report })
      case 'deliver-and-stall': {
        stallAt = command.stallAt
        const status = await deliver(command.notification)
        // Reached only when the stall point never came: the parent sees `stalled: null` and fails.
        report.statuses = [status]
        return void send({ kind: 'done', report })
      }
      case 'reconcile':
        report.reconciled = await auth.reconcileOrders({ now: command.now })
        return void send({ kind: 'done', report })
      case 'exit':
        await close()
        process.exit(0)
    }
  }

  process.on('message', (command: PaymentCommand) => {
    handle(command).catch((error: unknown) => send({ kind: 'failed', error: error instanceof Error ? (error.stack ?? error.message) : String(error) }))
  })
  send({ kind: 'ready' })
}

function emptyReport(): PaymentReport {
  return { statuses: [], outcomes: [], stalled: null, reconciled: null, commits: 0, conflicts: 0 }
}
