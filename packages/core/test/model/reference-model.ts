/**
 * A deliberately plain, second reading of docs/behaviour.md, written without core's rules: the
 * model the property tests compare `createScanAuth` against. Times in ms; one process; no store.
 */
const DAY = 86_400_000

interface MScene { sceneStr: string; deviceId: string; status: string; userId: number | null; expiresAt: number }
interface MAuth { id: number; userId: number; type: 'time' | 'points'; status: string; startAt: number; endAt: number | null; points: number; source: string; createdAt: number }
interface MSession { token: string; userId: number; sceneStr: string; expiresAt: number }

export class ReferenceModel {
  scenes = new Map<string, MScene>()
  users = new Map<string, { id: number; claimed: boolean }>()
  auths: MAuth[] = []
  sessions: MSession[] = []
  private ids = { user: 0, auth: 0 }

  constructor(private readonly cfg: { sceneMs: number; sessionMs: number; freeMs: number }) {}

  createScene(sceneStr: string, deviceId: string, now: number) {
    this.scenes.set(sceneStr, { sceneStr, deviceId, status: 'pending', userId: null, expiresAt: now + this.cfg.sceneMs })
  }

  private valid(a: MAuth, now: number) {
    return a.type === 'time' ? a.endAt !== null && now < a.endAt : a.points > 0
  }

  /** The activation step, then the current authorization (or null). */
  private activate(userId: number, now: number): MAuth | null {
    const mine = this.auths.filter((a) => a.userId === userId)
    for (const a of mine) if (a.status === 'active' && !this.valid(a, now)) a.status = a.type === 'time' ? 'expired' : 'exhausted'
    if (!mine.some((a) => a.status === 'active')) {
      const next = mine.filter((a) => a.status === 'pending').sort((x, y) => x.createdAt - y.createdAt || x.id - y.id)[0]
      if (next) {
        next.status = 'active'
        if (next.type === 'time') {
          const duration = (next.endAt as number) - next.startAt
          next.startAt = now
          next.endAt = now + duration
        }
      }
    }
    const current = mine.filter((a) => a.status === 'active').sort((x, y) => y.id - x.id)[0] ?? null
    if (current && !this.valid(current, now)) {
      current.status = current.type === 'time' ? 'expired' : 'exhausted'
      return null
    }
    return current
  }

  private userFor(openid: string) {
    let user = this.users.get(openid)
    if (!user) this.users.set(openid, (user = { id: ++this.ids.user, claimed: false }))
    return user
  }

  private add(userId: number, a: Omit<MAuth, 'id' | 'userId'>): MAuth {
    const created = { ...a, id: ++this.ids.auth, userId }
    this.auths.push(created)
    return created
  }

  poll(sceneStr: string, now: number): string {
    const scene = this.scenes.get(sceneStr)
    if (!scene) return '404'
    if (scene.status === 'pending') {
      if (now >= scene.expiresAt) scene.status = 'expired'
      return scene.status
    }
    if (scene.status === 'expired') return 'expired'
    const current = this.activate(scene.userId as number, now)
    if (!current) return 'need_purchase'
    const session = this.sessions.filter((s) => s.sceneStr === sceneStr).at(-1)
    return !session || now >= session.expiresAt ? 'expired' : 'authorized'
  }

  scan(sceneStr: string, openid: string, token: string, now: number): string {
    const scene = this.scenes.get(sceneStr)
    if (!scene || scene.status === 'authorized' || scene.status === 'expired') return 'invalid'
    if (now >= scene.expiresAt) {
      scene.status = 'expired'
      return 'invalid'
    }
    const user = this.userFor(openid)
    if (!user.claimed) {
      user.claimed = true
      // A stored active authorization that is no longer valid counts as absent: it expires now.
      for (const a of this.auths) if (a.userId === user.id && a.status === 'active' && !this.valid(a, now)) a.status = a.type === 'time' ? 'expired' : 'exhausted'
      const hasActive = this.auths.some((a) => a.userId === user.id && a.status === 'active')
      this.add(user.id, { type: 'time', status: hasActive ? 'pending' : 'active', startAt: now, endAt: now + this.cfg.freeMs, points: 0, source: 'free', createdAt: now })
    }
    const current = this.activate(user.id, now)
    scene.status = 'authorized'
    scene.userId = user.id
    this.sessions.push({ token, userId: user.id, sceneStr, expiresAt: now + this.cfg.sessionMs })
    return current ? 'authorized' : 'need_purchase'
  }

  grant(openid: string, kind: { type: 'time'; seconds: number } | { type: 'points'; points: number }, now: number): string {
    const user = this.userFor(openid)
    const created = kind.type === 'time'
      ? this.add(user.id, { type: 'time', status: 'pending', startAt: now, endAt: now + kind.seconds * 1000, points: 0, source: 'admin', createdAt: now })
      : this.add(user.id, { type: 'points', status: 'pending', startAt: now, endAt: null, points: kind.points, source: 'admin', createdAt: now })
    this.activate(user.id, now)
    return created.status
  }

  consume(token: string, points: number, now: number): string {
    const session = this.sessions.find((s) => s.token === token)
    if (!session || now >= session.expiresAt) return '401'
    const current = this.activate(session.userId, now)
    if (!current) return 'need_purchase'
    if (current.type === 'time') return 'ok:time'
    if (current.points < points) return 'insufficient_points'
    current.points -= points
    return `ok:points:${current.points}`
  }

  static readonly DAY = DAY
}
