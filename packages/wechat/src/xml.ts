/**
 * The XML of WeChat pushes and replies.
 *
 * Parsing is deliberately narrow. WeChat's XML is a flat `<xml>` element of text and CDATA fields, so
 * the parser runs with entity processing off and anything carrying a DTD (`<!DOCTYPE`, `<!ENTITY`) is
 * refused before parsing: several WeChat SDKs shipped XXE holes through parsers with entities on. Only
 * the five predefined XML entities and numeric character references are decoded, by hand, in text
 * outside CDATA; that needs no DTD and cannot expand.
 *
 * @module
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser'
import { WechatError } from './errors'

/** A parsed field: text, or an element with children (e.g. `ScanCodeInfo`), or repeated elements. */
export type XmlValue = string | XmlObject | XmlValue[]

/** An element's children by tag name. */
export interface XmlObject {
  [name: string]: XmlValue
}

/** The body is not acceptable XML (code `xml_error`). The push is rejected with 400 and nothing is processed. */
export class WechatXmlError extends WechatError {
  constructor(message: string) {
    super('xml_error', message)
    this.name = 'WechatXmlError'
  }
}

const CDATA = '#cdata'
const TEXT = '#text'

const parser = new XMLParser({
  // Order matters for mixed text and CDATA inside one field, so keep it.
  preserveOrder: true,
  cdataPropName: CDATA,
  textNodeName: TEXT,
  processEntities: false,
  htmlEntities: false,
  // Every value stays a string: MsgId has 19 digits and EventKey may look numeric.
  parseTagValue: false,
  ignoreAttributes: true,
  trimValues: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  maxNestedTags: 16,
})

/** Refuses DTDs, which are the carriers of external and recursive entities. */
export function assertNoDtd(xml: string): void {
  if (/<!\s*(DOCTYPE|ENTITY)/i.test(xml)) throw new WechatXmlError('XML with a DOCTYPE or ENTITY declaration is not accepted')
}

/**
 * Parses a WeChat XML document whose root is `<xml>` into its fields.
 *
 * Text fields become strings (CDATA kept verbatim, surrounding whitespace of plain text trimmed),
 * elements with children become objects, repeated elements arrays. The result has no prototype, so a
 * field name can never reach `Object.prototype`.
 *
 * @throws {@link WechatXmlError} for a DTD, malformed XML, or a root other than one `<xml>` element
 */
export function parseXml(xml: string): XmlObject {
  assertNoDtd(xml)
  if (XMLValidator.validate(xml) !== true) throw new WechatXmlError('malformed XML')
  let nodes: unknown
  try {
    nodes = parser.parse(xml)
  } catch {
    // e.g. a tag named __proto__, refused by the parser itself
    throw new WechatXmlError('malformed XML')
  }
  const roots = elementsOf(nodes)
  if (roots.length !== 1 || roots[0]?.[0] !== 'xml') throw new WechatXmlError('the XML root must be one <xml> element')
  const value = toValue(roots[0][1])
  if (typeof value === 'string') return Object.create(null) as XmlObject
  return value as XmlObject
}

type Node = Record<string, unknown>

/** The element children of an ordered node list, as [name, children] pairs. */
function elementsOf(nodes: unknown): Array<[string, unknown[]]> {
  const out: Array<[string, unknown[]]> = []
  for (const node of Array.isArray(nodes) ? (nodes as Node[]) : []) {
    for (const name of Object.keys(node)) {
      if (name === TEXT || name === CDATA || name === ':@') continue
      const children = node[name]
      out.push([name, Array.isArray(children) ? children : []])
    }
  }
  return out
}

/** One element's value: concatenated text and CDATA, or an object when it has child elements. */
function toValue(children: unknown[]): XmlValue {
  const elements = elementsOf(children)
  if (elements.length === 0) {
    let text = ''
    let sawCdata = false
    for (const child of children as Node[]) {
      if (TEXT in child) text += decodeEntities(String(child[TEXT]))
      if (CDATA in child) {
        sawCdata = true
        for (const part of child[CDATA] as Node[]) text += String(part[TEXT] ?? '')
      }
    }
    // Whitespace around plain text is formatting; CDATA content is kept exactly as sent.
    return sawCdata ? text : text.trim()
  }
  const object = Object.create(null) as XmlObject
  for (const [name, grandChildren] of elements) {
    const value = toValue(grandChildren)
    const existing = object[name]
    if (existing === undefined) object[name] = value
    else if (Array.isArray(existing)) existing.push(value)
    else object[name] = [existing, value]
  }
  return object
}

const NAMED: Readonly<Record<string, string>> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" }

/** Decodes the predefined entities and character references; anything else stays as written. */
function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]{1,6}|#[0-9]{1,7}|lt|gt|amp|quot|apos);/g, (whole, name: string) => {
    if (name.startsWith('#')) {
      const code = name[1] === 'x' ? Number.parseInt(name.slice(2), 16) : Number.parseInt(name.slice(1), 10)
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole
    }
    return NAMED[name] ?? whole
  })
}

/**
 * Wraps text in CDATA. A `]]>` inside the text would end the section early, so it is split across two
 * sections (`]]` + `]]><![CDATA[` + `>`), which a reader joins back into the original text.
 */
export function cdata(text: string): string {
  return `<![CDATA[${text.replaceAll(']]>', ']]]]><![CDATA[>')}]]>`
}

/**
 * Builds a flat `<xml>` document. Strings go in CDATA; numbers are written bare (WeChat writes
 * `CreateTime` and `TimeStamp` that way). Field names are the caller's constants, never user input.
 */
export function buildXml(fields: Readonly<Record<string, string | number>>): string {
  let body = ''
  for (const [name, value] of Object.entries(fields)) {
    body += `<${name}>${typeof value === 'number' ? String(value) : cdata(value)}</${name}>`
  }
  return `<xml>${body}</xml>`
}

/** A top-level text field of a parsed message, or `undefined` when absent or not text. */
export function textField(fields: XmlObject, name: string): string | undefined {
  const value = fields[name]
  return typeof value === 'string' ? value : undefined
}
