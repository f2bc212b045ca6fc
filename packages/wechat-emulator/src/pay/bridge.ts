/**
 * The `WeixinJSBridge` stand-in served at `GET /emulator/jsapi-bridge.js`: what lets a JSAPI page be
 * developed in an ordinary browser. Inside WeChat, where `window.WeixinJSBridge` already exists, it
 * does nothing, so a page may load it unconditionally while developing.
 *
 * Otherwise it defines `WeixinJSBridge.invoke(name, params, callback)` and dispatches
 * `WeixinJSBridgeReady` on `document`, as WeChat does once its bridge is in place (pages wait for that
 * event or call at once when the bridge exists). `getBrandWCPayRequest` asks the emulator to check the
 * parameters (`POST /emulator/jsapi/cashier`): when WeChat's cashier would refuse them the callback
 * gets `get_brand_wcpay_request:fail` at once and the reason goes to the console, else an overlay
 * shows the amount and description with **Pay** and **Cancel**. Pay posts the parameters to
 * `POST /emulator/jsapi/pay`; the callback gets the `err_msg` it answers. Cancel answers `…:cancel`.
 * Any other function answers `system:function_not_exist`, WeChat's answer for one it does not have.
 *
 * The script works under a strict Content Security Policy: it is one external file (no `eval`, no
 * inline handlers), builds the overlay with DOM calls and sets styles through `element.style`, and
 * reaches the emulator with `fetch` only (`connect-src` of the emulator's origin). It learns that
 * origin from `document.currentScript.src`; the origin of the request that served it is the fallback
 * (a script loaded as a module has no `currentScript`). Requests are `text/plain` (no CORS preflight)
 * and carry credentials, so the emulator sees the `wxemu_openid` cookie that names the phone's user
 * (cookies are per host, not per port: the Official Account emulator's cookie reaches this one).
 *
 * @module
 */

/** Where the pay emulator serves the script. */
export const JSAPI_BRIDGE_PATH = '/emulator/jsapi-bridge.js'

/** The id of the overlay, and of its two buttons, for tests and for people reading the page. */
export const CASHIER_IDS = { cashier: 'wechatpay-emulator-cashier', pay: 'wechatpay-emulator-pay', cancel: 'wechatpay-emulator-cancel' } as const

/** The script, with `fallbackOrigin` (the origin the request for it named) for when `currentScript` is unknown. */
export function bridgeScript(fallbackOrigin: string): string {
  return `/* WeixinJSBridge stand-in of the scanauth WeChat Pay emulator. Does nothing inside WeChat. */
(function () {
  'use strict'
  if (window.WeixinJSBridge) return
  var script = document.currentScript
  var origin = ${JSON.stringify(fallbackOrigin)}
  try { if (script && script.src) origin = new URL(script.src).origin } catch (e) { /* keep the fallback */ }
  var IDS = ${JSON.stringify(CASHIER_IDS)}
  var FAIL = 'get_brand_wcpay_request:fail'
  var busy = false

  function warn(text) { console.warn('[WeChat Pay emulator] ' + text) }

  // WeChat calls back asynchronously, never inside invoke.
  function answer(callback, result) {
    setTimeout(function () { if (typeof callback === 'function') callback(result) }, 0)
  }

  function post(path, params) {
    return fetch(origin + path, {
      method: 'POST',
      credentials: 'include',
      headers: { 'content-type': 'text/plain;charset=UTF-8' },
      body: JSON.stringify(params),
    }).then(function (res) { return res.json() })
  }

  function element(tag, text, css) {
    var node = document.createElement(tag)
    if (text) node.textContent = text
    if (css) node.style.cssText = css
    return node
  }

  function showCashier(summary, params, callback) {
    var overlay = element('div', '', 'position:fixed;inset:0;z-index:2147483647;background:rgba(0,0,0,.55);display:flex;align-items:flex-end;justify-content:center;font:16px/1.4 system-ui,sans-serif')
    overlay.id = IDS.cashier
    overlay.setAttribute('role', 'dialog')
    overlay.setAttribute('aria-label', 'WeChat Pay (emulator)')
    var panel = element('div', '', 'background:#fff;color:#111;width:100%;max-width:28rem;border-radius:12px 12px 0 0;padding:1.25rem;box-sizing:border-box;text-align:center')
    panel.append(
      element('div', 'WeChat Pay · emulator', 'color:#666;font-size:.85rem'),
      element('div', typeof summary.total === 'number' ? '¥' + (summary.total / 100).toFixed(2) : '', 'font-size:2rem;font-weight:600;margin:.5rem 0'),
      element('div', summary.description || '', 'margin-bottom:.25rem;overflow-wrap:anywhere'),
      element('div', summary.payer ? 'Paying as ' + summary.payer : '', 'color:#666;font-size:.8rem;margin-bottom:1rem;overflow-wrap:anywhere'))
    var pay = element('button', 'Pay', 'display:block;width:100%;padding:.75rem;border:0;border-radius:6px;background:#07c160;color:#fff;font-size:1rem;cursor:pointer')
    pay.id = IDS.pay
    pay.type = 'button'
    var cancel = element('button', 'Cancel', 'display:block;width:100%;padding:.75rem;margin-top:.5rem;border:0;border-radius:6px;background:#f2f2f2;color:#111;font-size:1rem;cursor:pointer')
    cancel.id = IDS.cancel
    cancel.type = 'button'
    panel.append(pay, cancel)
    overlay.append(panel)
    document.body.append(overlay)

    function finish(result) {
      overlay.remove()
      busy = false
      answer(callback, result)
    }
    cancel.addEventListener('click', function () { finish({ err_msg: 'get_brand_wcpay_request:cancel' }) })
    pay.addEventListener('click', function () {
      pay.disabled = true
      cancel.disabled = true
      pay.textContent = 'Paying…'
      post('/emulator/jsapi/pay', params).then(function (out) {
        if (out.reason) warn('payment refused: ' + out.reason)
        finish({ err_msg: typeof out.err_msg === 'string' ? out.err_msg : FAIL })
      }, function (error) {
        warn('the emulator at ' + origin + ' cannot be reached: ' + error)
        finish({ err_msg: FAIL })
      })
    })
  }

  function getBrandWCPayRequest(params, callback) {
    if (busy) {
      warn('a cashier is already open')
      return answer(callback, { err_msg: FAIL })
    }
    busy = true
    post('/emulator/jsapi/cashier', params).then(function (summary) {
      if (summary.ok) return showCashier(summary, params, callback)
      warn('the cashier refuses these parameters: ' + summary.reason)
      busy = false
      answer(callback, { err_msg: FAIL })
    }, function (error) {
      warn('the emulator at ' + origin + ' cannot be reached: ' + error)
      busy = false
      answer(callback, { err_msg: FAIL })
    })
  }

  window.WeixinJSBridge = {
    invoke: function (name, params, callback) {
      if (name === 'getBrandWCPayRequest') return getBrandWCPayRequest(params, callback)
      warn(name + ' is not emulated; only getBrandWCPayRequest is')
      answer(callback, { err_msg: 'system:function_not_exist' })
    },
    on: function () {},
  }
  document.dispatchEvent(new Event('WeixinJSBridgeReady'))
})()
`
}
