/**
 * The example server's safe defaults, the same for Express and Koa: it listens on 127.0.0.1 unless
 * told otherwise, a port in use or a foreign address names the variable to set, and in emulator mode
 * a Token and EncodingAESKey from the environment are the emulated account's, so pushes signed by
 * hand (as with `curl`) and safe mode work locally. Real sockets, the emulator in-process.
 */
import { randomBytes } from 'node:crypto'
import { createServer, type Server } from 'node:net'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { computeSignature, decodeAesKey, encryptMessage } from '@scanauth/wechat'
import { createPendingScene, fetchJson } from '@scanauth/testkit'
import { ConfigError, type ExampleConfig } from '../src/config'
import type { RunningServer } from '../src/serve'
import type { StartServer } from './app-suite'

/** The emulated account's AppID (examples/shared/src/wiring.ts): encrypted pushes carry it. */
const EMULATED_APP_ID = 'wx00e0demo00emulator'

/** A scan event as WeChat pushes it, for the scene `sceneStr` and the user `openid`. */
function scanEventXml(sceneStr: string, openid: string): string {
  const now = Math.floor(Date.now() / 1000)
  return `<xml><ToUserName><![CDATA[gh_demo]]></ToUserName><FromUserName><![CDATA[${openid}]]></FromUserName><CreateTime>${now}</CreateTime><MsgType><![CDATA[event]]></MsgType><Event><![CDATA[SCAN]]></Event><EventKey><![CDATA[${sceneStr}]]></EventKey><Ticket><![CDATA[t]]></Ticket></xml>`
}

/** The signed query of a push: what `curl` needs besides the body. */
function signedQuery(token: string, extra: (timestamp: string, nonce: string) => Record<string, string> = () => ({})): URLSearchParams {
  const timestamp = String(Math.floor(Date.now() / 1000))
  const nonce = randomBytes(6).toString('hex')
  return new URLSearchParams({ signature: computeSignature(token, timestamp, nonce), timestamp, nonce, ...extra(timestamp, nonce) })
}

async function push(url: string, query: URLSearchParams, body: string): Promise<{ status: number; text: string }> {
  const res = await fetch(`${url}/wechat/callback?${query}`, { method: 'POST', headers: { 'content-type': 'text/xml' }, body })
  return { status: res.status, text: await res.text() }
}

/** Registers the safe-defaults suite for `framework`, run against its `startServer`. */
export function describeSafeDefaults(framework: 'express' | 'koa', startServer: StartServer): void {
  const running: RunningServer[] = []
  const occupied: Server[] = []
  afterEach(async () => {
    await Promise.all(running.splice(0).map((r) => r.close()))
    await Promise.all(occupied.splice(0).map((s) => new Promise((ok) => s.close(ok))))
  })

  /** Starts with the memory store and the emulator; `host` is left to the default unless given. */
  async function start(overrides: Partial<ExampleConfig> = {}) {
    const lines: string[] = []
    const server = await startServer({ port: 0, store: { kind: 'memory' }, wechat: { kind: 'emulator' }, log: (line) => lines.push(line), ...overrides })
    running.push(server)
    return { server, url: server.url, log: () => lines.join('\n') }
  }

  describe(`the ${framework} example's safe defaults`, () => {
    it('listens on 127.0.0.1 unless HOST says otherwise, and says so when it faces the network', async () => {
      const local = await start()
      expect((local.server.server.address() as AddressInfo).address).toBe('127.0.0.1')
      expect(local.url).toBe(`http://127.0.0.1:${local.server.port}`)
      expect(local.log()).toContain(`listening on http://127.0.0.1:${local.server.port}`)
      expect(local.log()).not.toContain('every interface')

      const everywhere = await start({ host: '0.0.0.0' })
      expect((everywhere.server.server.address() as AddressInfo).address).toBe('0.0.0.0')
      expect(everywhere.log()).toContain(`listening on http://localhost:${everywhere.server.port} (every interface, HOST=0.0.0.0: reachable from other machines)`)
    })

    it('says to set PORT when the port is taken, and to set HOST for an address that is not this machine', async () => {
      const taken = createServer()
      occupied.push(taken)
      await new Promise<void>((ok) => taken.listen(0, '127.0.0.1', ok))
      const { port } = taken.address() as AddressInfo
      const inUse = start({ port })
      await expect(inUse).rejects.toThrow(ConfigError)
      await expect(inUse).rejects.toThrow(`port ${port} on 127.0.0.1 is already in use: set PORT to another port (PORT=0 picks a free one)`)

      // 192.0.2.1 is TEST-NET-1 (RFC 5737): never an address of this machine.
      await expect(start({ host: '192.0.2.1' })).rejects.toThrow('192.0.2.1 is not an address of this machine: set HOST')
    })

    it('without WECHAT_TOKEN or a key, the emulator uses its own token and a fresh key, and the start-up line says so', async () => {
      const { log } = await start()
      expect(log()).toMatch(/WeChat emulator at http:\/\/127\.0\.0\.1:\d+ with its own token and a fresh EncodingAESKey, safe mode/)
    })

    it('with WECHAT_TOKEN alone, the emulated account uses it in plain mode: a push signed by hand signs in', async () => {
      const token = 'my-own-token-42'
      const { server, url, log } = await start({ wechat: { kind: 'emulator', token } })
      expect(log()).toContain('with WECHAT_TOKEN, plain mode (no WECHAT_ENCODING_AES_KEY)')
      expect(log()).not.toContain(token) // a secret of the person's: named, never printed

      const scene = (await createPendingScene(url, `${framework}-curl`)).scene_str as string
      const forged = await push(url, signedQuery('emulator-token'), scanEventXml(scene, 'o_curl'))
      expect(forged.status).toBe(401)
      expect((await fetchJson(`${url}/auth/status?scene=${scene}`)).body).toEqual({ status: 'pending' })

      const signed = await push(url, signedQuery(token), scanEventXml(scene, 'o_curl'))
      expect(signed.status).toBe(200)
      expect((await fetchJson(`${url}/auth/status?scene=${scene}`)).body).toMatchObject({ status: 'authorized' })
      expect(log()).toContain(`scan ${scene} by o_curl: authorized`)

      // The emulated phone signs with the same token.
      const second = (await createPendingScene(url, `${framework}-phone`)).scene_str as string
      expect((await server.wiring.emulator!.scan({ sceneStr: second, openid: 'o_phone' })).status).toBe(200)
      expect((await fetchJson(`${url}/auth/status?scene=${second}`)).body).toMatchObject({ status: 'authorized' })
    })

    it('with WECHAT_TOKEN and WECHAT_ENCODING_AES_KEY, the emulated account runs in safe mode with that key', async () => {
      const token = 'safe-token'
      const encodingAESKey = randomBytes(32).toString('base64').replace(/[+/]/g, 'A').slice(0, 43)
      const { server, url, log } = await start({ wechat: { kind: 'emulator', token, encodingAESKey } })
      expect(log()).toContain('with WECHAT_TOKEN and WECHAT_ENCODING_AES_KEY, safe mode')
      expect(log()).not.toContain(encodingAESKey)

      // A safe-mode push made by hand: the message encrypted with the key, msg_signature over it.
      const scene = (await createPendingScene(url, `${framework}-safe`)).scene_str as string
      const encrypt = encryptMessage(decodeAesKey(encodingAESKey), EMULATED_APP_ID, scanEventXml(scene, 'o_safe'))
      const query = signedQuery(token, (timestamp, nonce) => ({ encrypt_type: 'aes', msg_signature: computeSignature(token, timestamp, nonce, encrypt) }))
      const answer = await push(url, query, `<xml><ToUserName><![CDATA[gh_demo]]></ToUserName><Encrypt><![CDATA[${encrypt}]]></Encrypt></xml>`)
      expect(answer.status).toBe(200)
      expect((await fetchJson(`${url}/auth/status?scene=${scene}`)).body).toMatchObject({ status: 'authorized' })

      // The emulated phone pushes in safe mode with the same key.
      const second = (await createPendingScene(url, `${framework}-phone`)).scene_str as string
      expect((await server.wiring.emulator!.scan({ sceneStr: second, openid: 'o_phone' })).status).toBe(200)
      expect((await fetchJson(`${url}/auth/status?scene=${second}`)).body).toMatchObject({ status: 'authorized' })
    })

    it('with a key alone, the emulated account keeps its own token and the start-up line names it', async () => {
      const encodingAESKey = 'A'.repeat(43)
      const { log } = await start({ wechat: { kind: 'emulator', encodingAESKey } })
      expect(log()).toContain('with token "emulator-token" (set WECHAT_TOKEN to choose one) and WECHAT_ENCODING_AES_KEY, safe mode')
    })
  })
}
