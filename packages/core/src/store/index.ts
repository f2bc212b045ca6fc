/**
 * `@scanauth/core/store`: the door a store author imports. The {@link Store} contract method by
 * method (docs/stores.md) with the queries of its operator reads, the records it keeps and the
 * change sets it commits, and what every store shares so that no store writes a rule of its own:
 * the retention rule and the purge loop, FIFO order, the scene-change fan-out, the id formats.
 * `@scanauth/testkit`'s contract suite checks a store against all of it.
 *
 * @example
 * ```ts
 * import type { Store, LoadQuery, LoadResult, ChangeSet, CommitResult } from '@scanauth/core/store'
 * import { NEW_USER, fifoOrder, purgeInBatches } from '@scanauth/core/store'
 * ```
 *
 * @packageDocumentation
 */
export {
  NEW_USER,
  type Store,
  type LoadQuery,
  type LoadResult,
  type ChangeSet,
  type SceneWrite,
  type SceneDraft,
  type UserWrite,
  type UserRef,
  type NewAuthorization,
  type NewSession,
  type AssignedIds,
  type CommitResult,
  type AuthorizationRef,
  type NewLedgerEntry,
  type NewIdempotencyRecord,
  type SessionSelector,
  type SceneChangeListener,
  type LedgerQuery,
  type OrderWrite,
  type OpenOrderQuery,
} from './contract'
export type {
  LiveSessionQuery,
  UserListQuery,
  OrderListQuery,
  OrderCursor,
  SchemaState,
  SchemaStep,
  MigrationResult,
} from './operator-reads'
export type { ActiveAuthorizationQuery } from './reminder-reads'
export type {
  SceneRecord,
  SceneStatus,
  SceneConfirmation,
  UserRecord,
  UserAggregate,
  AuthorizationRecord,
  AuthorizationStatus,
  AuthorizationType,
  SessionRecord,
  LedgerKind,
  LedgerEntryRecord,
  IdempotencyRecord,
  OrderRecord,
  OrderStatus,
  OrderChannel,
  OrderGrant,
  OrderRefundRecord,
} from './records'
export { SceneListenerSet, type SceneListenerEvents } from './scene-listeners'
export {
  resolvePurgeOptions,
  purgeInBatches,
  purgeableScenes,
  startOfScenes,
  DEFAULT_PURGE_BATCH_SIZE,
  type PurgeSceneCandidate,
  type PurgeSceneCursor,
  type PurgeOptions,
  type PurgeResult,
  type ResolvedPurgeOptions,
  type PurgeBatchOutcome,
} from './purge'
export { sceneNeededUntil, orderNeededUntil, purgeCutoff, mayPurge } from '../rules/retention'
export { fifoOrder } from '../rules/authorizations'
export { SCENE_STR_PATTERN, ORDER_ID_PATTERN, newSceneStr, newSessionToken, newOrderId, newSecret } from '../service/random'
export { ScanAuthError, type ScanAuthErrorCode } from '../errors'
