/**
 * Drawing a QR code in a terminal: pure functions from a module matrix to lines of text.
 *
 * Why it looks the way it does (../../shared/reference/device-client.md §4):
 * - **Full size by default**: each module is two cells wide and one line tall, which is about square
 *   in a terminal. The compact style (two module rows per line with `▀`) halves the height but leaves
 *   gaps in terminals that add line spacing (macOS Terminal.app, some embedded ones): opt-in only.
 * - **Both colours set**: a terminal theme decides what "the text colour" is, so a code drawn with
 *   `█` alone is black on white on a light theme and inverted on a dark one, which many scanners
 *   refuse. With colours, every cell sets its foreground *and* background, dark modules as `██` in
 *   black on black and light ones as spaces on white, so the code is black on white on any theme and
 *   still a code if a terminal drops the background. The two are the fixed entries 16 (#000000) and
 *   231 (#ffffff) of the 256-colour palette, which themes leave alone, unlike the 16 named colours
 *   (a theme's "black" is often a dark grey or teal, its "white" a light grey).
 * - **A quiet zone of 4 modules** on every side, as the QR specification asks: without it, scanners
 *   lose the finder patterns against whatever the terminal shows around the code.
 * - Without colours (`NO_COLOR`, output not a terminal) dark modules are glyphs and light ones spaces:
 *   right on a light theme; the caller says so and prints the URL under the code anyway.
 *
 * @module
 */
import QRCode from 'qrcode'

/** A square of modules, row-major: `data[row * size + column]` is truthy for a dark module. */
export interface QrMatrix {
  /** Modules per side. */
  size: number
  /** `size * size` entries, row by row. */
  data: ArrayLike<number | boolean>
}

/** How to draw a code. */
export interface TerminalQrOptions {
  /** `full` (default): one line per module row, two cells per module; `compact`: two module rows per line. */
  style?: 'full' | 'compact'
  /** Set the colours (default true); false draws dark modules as glyphs on the terminal's own background. */
  color?: boolean
  /** Light modules around the code (default 4, the specification's minimum). */
  quietZone?: number
}

/** Foreground black, background white, and back to the terminal's colours. */
const ESC = '\x1b['
const FG = { dark: `${ESC}38;5;16m`, light: `${ESC}38;5;231m` }
const BG = { dark: `${ESC}48;5;16m`, light: `${ESC}48;5;231m` }
const RESET = `${ESC}0m`

/** The quiet zone every code gets unless told otherwise. */
export const QUIET_ZONE = 4

/** True when the module at (row, column) is dark; outside the matrix (the quiet zone) is light. */
function dark(matrix: QrMatrix, row: number, column: number): boolean {
  if (row < 0 || column < 0 || row >= matrix.size || column >= matrix.size) return false
  return Boolean(matrix.data[row * matrix.size + column])
}

/** The lines that draw `matrix`, quiet zone included, each ending with a colour reset when coloured. */
export function renderQr(matrix: QrMatrix, { style = 'full', color = true, quietZone = QUIET_ZONE }: TerminalQrOptions = {}): string[] {
  const first = -quietZone
  const end = matrix.size + quietZone
  const lines: string[] = []
  if (style === 'full') {
    for (let row = first; row < end; row++) {
      let line = ''
      let last: boolean | undefined
      for (let column = first; column < end; column++) {
        const isDark = dark(matrix, row, column)
        // A colour change only where the module changes: shorter lines, same picture.
        if (color && isDark !== last) line += isDark ? FG.dark + BG.dark : FG.light + BG.light
        line += isDark ? '██' : '  '
        last = isDark
      }
      lines.push(color ? line + RESET : line.trimEnd())
    }
    return lines
  }
  for (let row = first; row < end; row += 2) {
    let line = ''
    let last: string | undefined
    for (let column = first; column < end; column++) {
      const top = dark(matrix, row, column)
      // The last row of an odd height has nothing below it: the quiet zone's light.
      const bottom = row + 1 < end && dark(matrix, row + 1, column)
      if (color) {
        // `▀` shows the top module in the foreground colour and the bottom one in the background's.
        const paint = (top ? FG.dark : FG.light) + (bottom ? BG.dark : BG.light)
        if (paint !== last) line += paint
        line += '▀'
        last = paint
      } else {
        line += top ? (bottom ? '█' : '▀') : bottom ? '▄' : ' '
      }
    }
    lines.push(color ? line + RESET : line.trimEnd())
  }
  return lines
}

/** The QR code of `text` (error correction M, the version it needs), as {@link renderQr} draws it. */
export function terminalQr(text: string, options: TerminalQrOptions = {}): string[] {
  const { modules } = QRCode.create(text, { errorCorrectionLevel: 'M' })
  return renderQr(modules, options)
}
