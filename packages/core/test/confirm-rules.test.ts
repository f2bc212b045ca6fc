// The pure rules of confirm on the phone (docs/behaviour.md B-confirm-2, B-confirm-5, B-confirm-6)
// and of the poll secret (B-secret-1): what the phone is shown, and how secrets are compared.
import { describe, expect, it } from 'vitest'
import { digestSecret, displayLabel, maskAddress, matchesDigest, oauthStateOf } from '../src/rules/confirm'

describe('displayLabel (B-confirm-5)', () => {
  it('replaces every character that changes what is shown without showing itself', () => {
    expect(displayLabel('evil\u202Etxt.exe')).toBe('evil\uFFFDtxt.exe')
    expect(displayLabel('a\u200Bb\u200Dc\u2066d\uFEFF')).toBe('a\uFFFDb\uFFFDc\uFFFDd\uFFFD')
    // A line separator would start a line of its own in the chat.
    expect(displayLabel('tv\u2028[WeChat] verified\u2029')).toBe('tv\uFFFD[WeChat] verified\uFFFD')
    expect(displayLabel('tab\there\u0085')).toBe('tab\uFFFDhere\uFFFD')
  })

  it('keeps what is visible as it is, in its order', () => {
    expect(displayLabel('客厅的电视 😀 e\u0301')).toBe('客厅的电视 😀 e\u0301')
    expect(displayLabel('<b>&"')).toBe('<b>&"')
  })
})

describe('maskAddress (B-confirm-5)', () => {
  it('keeps an IPv4 address to its /24 and an IPv6 address to its /48', () => {
    expect(maskAddress('203.0.113.77')).toBe('203.0.113.*')
    expect(maskAddress('::ffff:198.51.100.9')).toBe('198.51.100.*')
    expect(maskAddress('2001:db8:85a3::8a2e:370:7334')).toBe('2001:db8:85a3:*')
    expect(maskAddress('2001:0DB8:0001:0000::1')).toBe('2001:db8:1:*')
    expect(maskAddress('::1')).toBe('0:0:0:*')
  })

  it('answers null for anything that is not an address', () => {
    for (const value of [undefined, '', 'localhost', '256.1.1.1', '1.2.3', '1::2::3', 'g::1', '1:2:3:4:5:6:7:8:9']) {
      expect(maskAddress(value)).toBeNull()
    }
  })
})

describe('secrets (B-confirm-2, B-confirm-6, B-secret-1)', () => {
  it('compares a secret with the digest it was stored as, and nothing else', () => {
    const digest = digestSecret('s3cret')
    expect(digest).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(matchesDigest('s3cret', digest)).toBe(true)
    expect(matchesDigest('s3creT', digest)).toBe(false)
    expect(matchesDigest(undefined, digest)).toBe(false)
    expect(matchesDigest('', digestSecret(''))).toBe(false)
    expect(matchesDigest('s3cret', null)).toBe(false)
  })

  it('derives an OAuth state WeChat accepts, the same for the same ticket, saying nothing of it', () => {
    const state = oauthStateOf('ticket-a')
    expect(state).toMatch(/^[0-9a-f]{32}$/)
    expect(oauthStateOf('ticket-a')).toBe(state)
    expect(oauthStateOf('ticket-b')).not.toBe(state)
  })
})
