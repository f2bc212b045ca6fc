import { describe, expect, it } from 'vitest'
import { buildXml, cdata, parseXml, WechatXmlError } from '../src/xml'

describe('parseXml', () => {
  it('reads text and CDATA fields as strings, keeping CDATA verbatim', () => {
    const fields = parseXml('<?xml version="1.0"?>\n<xml>\n <A><![CDATA[ spaced ]]></A>\n <CreateTime> 1409735668 </CreateTime>\n <MsgId>6054768590064713728</MsgId>\n <E></E>\n</xml>')
    expect(fields.A).toBe(' spaced ')
    expect(fields.CreateTime).toBe('1409735668')
    expect(fields.MsgId).toBe('6054768590064713728')
    expect(fields.E).toBe('')
  })

  it('decodes only the predefined entities and character references, outside CDATA', () => {
    const fields = parseXml('<xml><A>a &amp; b &lt;c&gt; &#20320;&#x597D; &nbsp;</A><B><![CDATA[&amp;]]></B></xml>')
    expect(fields.A).toBe('a & b <c> 你好 &nbsp;')
    expect(fields.B).toBe('&amp;')
  })

  it('keeps mixed text and CDATA in order; nests child elements; repeats become arrays', () => {
    const fields = parseXml('<xml><M><![CDATA[a]]>&lt;<![CDATA[b]]></M><Info><Type>qrcode</Type><Result>x</Result></Info><P>1</P><P>2</P></xml>')
    expect(fields.M).toBe('a<b')
    expect(fields.Info).toEqual({ Type: 'qrcode', Result: 'x' })
    expect(fields.P).toEqual(['1', '2'])
  })

  it('refuses DTDs, malformed XML and other roots', () => {
    const xxe = '<?xml version="1.0"?><!DOCTYPE xml [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><xml><A>&xxe;</A></xml>'
    expect(() => parseXml(xxe)).toThrow(WechatXmlError)
    expect(() => parseXml('<xml><!ENTITY a "b"><A>1</A></xml>')).toThrow(WechatXmlError)
    expect(() => parseXml('<xml><A>1</A>')).toThrow(WechatXmlError)
    expect(() => parseXml('<root><A>1</A></root>')).toThrow(WechatXmlError)
    expect(() => parseXml('<xml/><xml/>')).toThrow(WechatXmlError)
    expect(() => parseXml('{"json":true}')).toThrow(WechatXmlError)
    expect(() => parseXml('<xml><__proto__>x</__proto__></xml>')).toThrow(WechatXmlError)
  })

  it('has no prototype, and names that could reach Object.prototype are refused', () => {
    const fields = parseXml('<xml><A>y</A></xml>')
    expect(Object.getPrototypeOf(fields)).toBeNull()
    expect(fields.A).toBe('y')
    expect(() => parseXml('<xml><constructor>x</constructor></xml>')).toThrow(WechatXmlError)
  })
})

describe('buildXml', () => {
  it('writes strings as CDATA and numbers bare', () => {
    expect(buildXml({ A: 'x', CreateTime: 12 })).toBe('<xml><A><![CDATA[x]]></A><CreateTime>12</CreateTime></xml>')
  })

  it('splits "]]>" so the text survives a round trip', () => {
    const tricky = 'a]]>b]]]]>c<![CDATA[d'
    expect(cdata(tricky)).not.toContain(']]>b')
    expect(parseXml(buildXml({ Content: tricky })).Content).toBe(tricky)
  })
})
