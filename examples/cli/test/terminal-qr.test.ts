// The terminal drawing of a QR code: the exact lines for a known matrix (full size and compact, with
// and without colours), the quiet zone, and a real code drawn and read back module by module.
import { describe, expect, it } from 'vitest'
import QRCode from 'qrcode'
import { renderQr, terminalQr, type QrMatrix } from '../src/terminal-qr'

const ESC = '\x1b['
const DARK = `${ESC}38;5;16m${ESC}48;5;16m` // black on black
const LIGHT = `${ESC}38;5;231m${ESC}48;5;231m` // white on white
const RESET = `${ESC}0m`

/** A 3×3 matrix: a diagonal, plus the top right corner.  X.X / .X. / ..X */
const matrix: QrMatrix = { size: 3, data: [1, 0, 1, 0, 1, 0, 0, 0, 1] }

/** The text without its colour codes. */
const COLOUR = new RegExp(`${ESC.replace('[', '\\[')}[0-9;]*m`, 'g')
const strip = (line: string) => line.replace(COLOUR, '')

describe('renderQr', () => {
  it('draws each module two cells wide, one line per row, inside a quiet zone, without colours', () => {
    expect(renderQr(matrix, { color: false, quietZone: 1 })).toEqual([
      '',
      '  ██  ██',
      '    ██',
      '      ██',
      '',
    ])
  })

  it('sets foreground and background on every colour change, and resets at the end of each line', () => {
    expect(renderQr(matrix, { quietZone: 1 })).toEqual([
      `${LIGHT}          ${RESET}`,
      `${LIGHT}  ${DARK}██${LIGHT}  ${DARK}██${LIGHT}  ${RESET}`,
      `${LIGHT}    ${DARK}██${LIGHT}    ${RESET}`,
      `${LIGHT}      ${DARK}██${LIGHT}  ${RESET}`,
      `${LIGHT}          ${RESET}`,
    ])
  })

  it('draws two rows per line in the compact style, the last half row on the quiet zone', () => {
    // Rows -1…3 with a quiet zone of 1: five rows, so three lines, the last one's bottom half beyond
    // the drawing (light). Line 1 is the quiet row over row 0, line 2 rows 1 and 2, line 3 the quiet row.
    expect(renderQr(matrix, { style: 'compact', color: false, quietZone: 1 })).toEqual([' ▄ ▄', '  ▀▄', ''])
    const top = `${ESC}38;5;16m` // a dark module above…
    const bottomLight = `${ESC}48;5;231m`
    const lines = renderQr(matrix, { style: 'compact', quietZone: 1 })
    expect(lines).toHaveLength(3)
    expect(lines.map(strip)).toEqual(['▀▀▀▀▀', '▀▀▀▀▀', '▀▀▀▀▀'])
    // Line 2 holds rows 1 and 2: at column 1 a dark module over a light one.
    expect(lines[1]).toContain(`${top}${bottomLight}▀`)
    for (const line of lines) expect(line.endsWith(RESET)).toBe(true)
  })

  it('puts a quiet zone of 4 modules around the code by default', () => {
    const lines = renderQr(matrix)
    expect(lines).toHaveLength(3 + 8)
    for (const line of lines) expect(strip(line)).toHaveLength((3 + 8) * 2)
    for (const line of [...lines.slice(0, 4), ...lines.slice(-4)]) expect(strip(line).trim()).toBe('')
    expect(renderQr(matrix, { style: 'compact' })).toHaveLength(Math.ceil((3 + 8) / 2))
  })

  it('draws a real code that reads back module by module', () => {
    const text = 'http://127.0.0.1:3000/q/emulated-ticket'
    const { modules } = QRCode.create(text, { errorCorrectionLevel: 'M' })
    for (const color of [true, false]) {
      const lines = terminalQr(text, { color }).map(strip)
      expect(lines).toHaveLength(modules.size + 8)
      for (let row = 0; row < modules.size; row++) {
        const cells = (lines[row + 4] as string).padEnd((modules.size + 8) * 2)
        for (let column = 0; column < modules.size; column++) {
          const cell = cells.slice((column + 4) * 2, (column + 5) * 2)
          expect(cell).toBe(modules.get(row, column) ? '██' : '  ')
        }
      }
    }
  })
})
