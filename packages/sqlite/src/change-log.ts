/**
 * Change notification on one SQLite file (`Store.watchScenes`, docs/behaviour.md B-wait-4): every
 * commit that writes a scene appends the scene's `scene_str` to `scanauth_scene_changes` in its own
 * transaction, so the log and the scenes never disagree, and every process on the file can learn
 * what changed without any configuration in the process that committed.
 *
 * A store tells its own listeners of its own commits at once. Commits of other connections (other
 * processes, or other stores in this one) are found by a timer that runs only while the store has
 * listeners: every `changePollMs` it asks `PRAGMA data_version`, which changes exactly when
 * another connection has committed (https://sqlite.org/pragma.html#pragma_data_version; no lock,
 * no page read), and only then reads the log's rows after the last id it has seen. Costs and the
 * delay this adds are measured in docs/sqlite.md.
 *
 * @module
 */
import type Database from 'better-sqlite3'
import { SceneListenerSet, type SceneChangeListener } from '@scanauth/core/store'

/** How many of the newest rows the log keeps at least: far more than any process reads between two looks. */
export const CHANGE_LOG_KEEP = 10_000

/** Every this many rows, the commit that appends one also deletes the rows older than {@link CHANGE_LOG_KEEP}. */
export const CHANGE_LOG_PRUNE_EVERY = 1_000

type Statement<P extends unknown[], R = unknown> = Database.Statement<P, R>

/** The change log of one connection: appending in commits, and watching for other connections' rows. */
export class SceneChangeLog {
  private readonly append: Statement<[string]>
  private readonly prune: Statement<[number]>
  private readonly dataVersion: Statement<[], number>
  private readonly lastId: Statement<[], number>
  private readonly rowsAfter: Statement<[number], [number, string]>
  private readonly listeners = new SceneListenerSet({ onFirst: () => this.start(), onLast: () => this.stop() })
  private timer: NodeJS.Timeout | null = null
  /** The last `data_version` and log id this connection has read (meaningful while the timer runs). */
  private seenVersion = 0
  private seenId = 0

  /**
   * Prepares the log's statements on `db`, whose schema must be current.
   *
   * @param pollMs How often the timer looks for other connections' commits.
   */
  constructor(
    private readonly db: Database.Database,
    private readonly pollMs: number,
  ) {
    this.append = db.prepare<[string]>(`INSERT INTO scanauth_scene_changes (scene_str) VALUES (?)`)
    this.prune = db.prepare<[number]>(`DELETE FROM scanauth_scene_changes WHERE id <= ?`)
    this.dataVersion = db.prepare<[], number>(`PRAGMA data_version`).pluck()
    this.lastId = db.prepare<[], number>(`SELECT COALESCE(MAX(id), 0) FROM scanauth_scene_changes`).pluck()
    this.rowsAfter = db.prepare<[number], [number, string]>(`SELECT id, scene_str FROM scanauth_scene_changes WHERE id > ? ORDER BY id`).raw()
  }

  /**
   * Appends a written scene; runs inside the commit's transaction. One INSERT, and every
   * {@link CHANGE_LOG_PRUNE_EVERY}-th time one DELETE of the rows more than
   * {@link CHANGE_LOG_KEEP} behind (a range of the primary key, at most that many rows).
   */
  record(sceneStr: string): void {
    const id = Number(this.append.run(sceneStr).lastInsertRowid)
    if (id % CHANGE_LOG_PRUNE_EVERY === 0) this.prune.run(id - CHANGE_LOG_KEEP)
  }

  /** Tells this store's listeners of a scene its own commit wrote (called once the commit returned). */
  announce(sceneStr: string): void {
    if (this.listeners.size > 0) this.tell([sceneStr])
  }

  /** Registers a listener; the first one starts the timer, the last one leaving stops it. */
  watch(listener: SceneChangeListener): () => void {
    return this.listeners.add(listener)
  }

  /** Whether the timer runs. */
  get watching(): boolean {
    return this.timer !== null
  }

  /** Forgets every listener and stops the timer (the store is closing). */
  close(): void {
    this.listeners.clear()
    this.stop()
  }

  private start(): void {
    // An in-memory database has no other connection that could commit.
    if (this.db.memory) return
    // The version first: a commit landing between the two reads then changes the version the
    // first look compares with, so it is read (a repeat at worst); the other order could miss it.
    this.seenVersion = this.dataVersion.get() as number
    this.seenId = this.lastId.get() as number
    this.timer = setInterval(() => this.look(), this.pollMs)
    // Waiting never keeps the process alive on its own (a wait has its own timers for that).
    this.timer.unref()
  }

  private stop(): void {
    if (this.timer === null) return
    clearInterval(this.timer)
    this.timer = null
  }

  /** One look: nothing more than `PRAGMA data_version` unless another connection committed. */
  private look(): void {
    let rows: Array<[number, string]>
    try {
      const version = this.dataVersion.get() as number
      if (version === this.seenVersion) return
      rows = this.rowsAfter.all(this.seenId)
      // Only after both reads succeeded: a failed look is simply made again at the next tick.
      this.seenVersion = version
    } catch {
      // The application closed its own database under the store: nothing will change any more.
      // Any other failure (an I/O error) is retried at the next tick; waits time out meanwhile.
      if (!this.db.open) this.stop()
      return
    }
    const last = rows[rows.length - 1]
    if (last === undefined) return
    this.seenId = last[0]
    // Own commits come back here too when others commit in between: a repeat, which the
    // contract allows. A scene written several times since the last look is told once.
    this.tell(new Set(rows.map((row) => row[1])))
  }

  /** Calls every listener with every scene, after the current call stack (as MemoryStore does). */
  private tell(scenes: Iterable<string>): void {
    queueMicrotask(() => {
      // The listeners of the moment: one that stopped meanwhile is told nothing more.
      for (const sceneStr of scenes) this.listeners.tell(sceneStr)
    })
  }
}
