// The WeixinJSBridge stand-in in Chromium (Debian's, through playwright-core; never a download): a
// page on its own origin, under a strict CSP that allows only the emulator's origin for scripts and
// fetches (and inline styles), loads the script, waits for WeixinJSBridgeReady as WeChat's sample
// does, invokes getBrandWCPayRequest, and a person clicks Pay or Cancel in the overlay. Page-side code
// is given as strings: this project's TypeScript has no DOM types.
import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { chromium, type Browser, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startWechatPayEmulator, type WechatPayEmulator } from '../src/index'
import { closer } from './closer'
import { cashierParameters, jsapiOrder, merchantClient, notifyEndpoint } from './pay-client'

const CHROMIUM = '/usr/bin/chromium'
// Without chromium (apt-get install -y chromium) the test is skipped on a workstation, but fails in CI.
const missing = !existsSync(CHROMIUM)
if (missing && !process.env.CI) console.warn(`WeixinJSBridge browser test skipped: ${CHROMIUM} is missing (apt-get install -y chromium)`)

const VIEWER = 'o_browser_user'
const resources = closer()

/**
 * The merchant's phone page: the CSP of a strict app (nothing but its nonce, the emulator's origin for
 * scripts and fetches, inline styles), a listener for the ready event before the bridge loads, then
 * the bridge, then the page's code. With `?real=1` a bridge of "real WeChat" is there first.
 */
async function pageServer(emulator: WechatPayEmulator): Promise<string> {
  const emulatorOrigin = new URL(emulator.url).origin
  const server = createServer((req, res) => {
    const nonce = randomBytes(16).toString('base64')
    const real = new URL(req.url ?? '/', 'http://page.invalid').searchParams.get('real') === '1'
    const html = `<!doctype html><html><head><meta charset="utf-8"><title>phone page</title>
<script nonce="${nonce}">
window.violations = []
document.addEventListener('securitypolicyviolation', (e) => window.violations.push(e.violatedDirective + ' ' + e.blockedURI))
window.readyEvents = 0
document.addEventListener('WeixinJSBridgeReady', () => { window.readyEvents++ })
${real ? 'window.WeixinJSBridge = { realWechat: true }' : ''}
</script>
<script src="${emulator.jsapiBridgeUrl}"></script>
<script nonce="${nonce}">
window.pay = (params) => new Promise((resolve) => {
  const go = () => WeixinJSBridge.invoke('getBrandWCPayRequest', params, (res) => resolve(res.err_msg))
  if (typeof WeixinJSBridge == 'undefined') document.addEventListener('WeixinJSBridgeReady', go, false)
  else go()
})
</script></head><body><p>Renew your pass</p></body></html>`
    res.writeHead(200, {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': `default-src 'none'; script-src 'nonce-${nonce}' ${emulatorOrigin}; connect-src ${emulatorOrigin}; style-src 'unsafe-inline'`,
    })
    res.end(html)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  resources.add({ close: () => new Promise<void>((resolve) => (server.close(() => resolve()), server.closeAllConnections())) })
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
}

describe.skipIf(missing && !process.env.CI)('the WeixinJSBridge stand-in in chromium', () => {
  let browser: Browser
  let emulator: WechatPayEmulator
  let pageUrl: string
  let call: ReturnType<typeof merchantClient>
  let notifyUrl: string

  beforeAll(async () => {
    emulator = resources.add(await startWechatPayEmulator({ mchid: '1900000109', appid: 'wx_bridge_test0001', payerOpenid: VIEWER }))
    call = merchantClient(emulator)
    notifyUrl = (await notifyEndpoint(resources)).url
    pageUrl = await pageServer(emulator)
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    })
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    await resources.closeAll()
  })

  /** A JSAPI order for `payer`, and its cashier parameters signed with the merchant key. */
  async function order(payer = VIEWER) {
    const body = jsapiOrder(emulator, notifyUrl, payer, { description: 'scanauth 30-day pass', amount: { total: 1990, currency: 'CNY' } })
    const prepayId = (await call('POST', '/v3/pay/transactions/jsapi', body)).json.prepay_id as string
    const params = cashierParameters({ appId: emulator.appid, prepayId, privateKeyPem: emulator.merchantKey!.privateKeyPem, timeStamp: String(Math.floor(Date.now() / 1000)) })
    return { outTradeNo: body.out_trade_no as string, params }
  }

  const stateOf = (outTradeNo: string) => emulator.orders().find((o) => o.outTradeNo === outTradeNo)?.tradeState

  /** A fresh page (its own context, so cookies do not leak between tests) and its problems. */
  async function open(cookie?: string): Promise<{ page: Page; errors: string[]; warnings: string[] }> {
    const context = await browser.newContext()
    if (cookie !== undefined) await context.addCookies([{ name: 'wxemu_openid', value: cookie, url: emulator.url }])
    const page = await context.newPage()
    const errors: string[] = []
    const warnings: string[] = []
    page.on('pageerror', (error) => errors.push(error.message))
    page.on('console', (message) => {
      if (message.type() === 'warning') warnings.push(message.text())
      if (message.type() === 'error') errors.push(message.text())
    })
    await page.goto(pageUrl)
    return { page, errors, warnings }
  }

  it('defines the bridge, fires WeixinJSBridgeReady, and Pay pays: ok, the order paid', async () => {
    const { page, errors } = await open()
    expect(await page.evaluate('[typeof WeixinJSBridge.invoke, window.readyEvents]')).toEqual(['function', 1])
    const { outTradeNo, params } = await order()
    const outcome = page.evaluate(`window.pay(${JSON.stringify(params)})`)
    const cashier = page.locator('#wechatpay-emulator-cashier')
    await cashier.waitFor()
    expect(await cashier.textContent()).toContain('¥19.90')
    expect(await cashier.textContent()).toContain('scanauth 30-day pass')
    await page.click('#wechatpay-emulator-pay')
    expect(await outcome).toBe('get_brand_wcpay_request:ok')
    expect(await cashier.count()).toBe(0)
    expect(stateOf(outTradeNo)).toBe('SUCCESS')
    expect(await page.evaluate('window.violations')).toEqual([])
    expect(errors).toEqual([])
  })

  it('Cancel answers cancel and leaves the order open', async () => {
    const { page, errors } = await open()
    const { outTradeNo, params } = await order()
    const outcome = page.evaluate(`window.pay(${JSON.stringify(params)})`)
    await page.click('#wechatpay-emulator-cancel')
    expect(await outcome).toBe('get_brand_wcpay_request:cancel')
    expect(await page.locator('#wechatpay-emulator-cashier').count()).toBe(0)
    expect(stateOf(outTradeNo)).toBe('NOTPAY')
    expect(await page.evaluate('window.violations')).toEqual([])
    expect(errors).toEqual([])
  })

  it('sends the wxemu_openid cookie: the phone user it names pays their order', async () => {
    const { page } = await open('o_cookie_user')
    const { outTradeNo, params } = await order('o_cookie_user')
    const outcome = page.evaluate(`window.pay(${JSON.stringify(params)})`)
    await page.click('#wechatpay-emulator-pay')
    expect(await outcome).toBe('get_brand_wcpay_request:ok')
    expect(stateOf(outTradeNo)).toBe('SUCCESS')
  })

  it('answers fail without a cashier for parameters WeChat would refuse, saying why in the console', async () => {
    const { page, warnings } = await open()
    const { outTradeNo, params } = await order()
    const outcome = await page.evaluate(`window.pay(${JSON.stringify({ ...params, nonceStr: 'tampered' })})`)
    expect(outcome).toBe('get_brand_wcpay_request:fail')
    expect(await page.locator('#wechatpay-emulator-cashier').count()).toBe(0)
    expect(warnings.join('\n')).toMatch(/paySign does not verify/)
    expect(stateOf(outTradeNo)).toBe('NOTPAY')
    expect(await page.evaluate(`new Promise((resolve) => WeixinJSBridge.invoke('closeWindow', {}, (res) => resolve(res.err_msg)))`)).toBe('system:function_not_exist')
  })

  it('does nothing where WeixinJSBridge already exists (real WeChat)', async () => {
    const { page, errors } = await open()
    await page.goto(`${pageUrl}?real=1`)
    expect(await page.evaluate('[window.WeixinJSBridge.realWechat, typeof window.WeixinJSBridge.invoke, window.readyEvents]')).toEqual([true, 'undefined', 0])
    expect(errors).toEqual([])
  })
})
