/**
 * The consumer test's record for people: each tarball's size, the production dependency tree a user
 * gets, and anything noticed but not failed on. Written to `test/consumer/.last-run.txt`
 * (gitignored), so a release note can quote it; a passing run prints only `summaryLine`.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { PackedTarball } from './workspace'

/** Where the record goes. */
export const LAST_RUN_FILE = join(import.meta.dirname, '.last-run.txt')

/** What goes into the record. */
export interface ConsumerRecord {
  tarballs: PackedTarball[]
  /** `npm ls --omit=dev --all` in the consumer: its exit code and output. */
  productionTree: { code: number | null; text: string }
  /** Notes (third-party type problems, ...), one per line. */
  notes: string[]
}

/** The tarball sizes as an aligned table. */
function sizeTable(tarballs: PackedTarball[]): string {
  const rows = [['package', 'tarball bytes', 'unpacked bytes', 'files'], ...tarballs.map((t) => [t.name, String(t.size), String(t.unpackedSize), String(t.files.length)])]
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)))
  return rows.map((row) => row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  ')).join('\n')
}

/** Writes the record and returns its text. */
export function writeRecord(record: ConsumerRecord): string {
  const total = record.tarballs.reduce((sum, t) => sum + t.size, 0)
  const text = [
    `scanauth consumer test, ${new Date().toISOString()}, node ${process.version}`,
    '',
    `Tarballs (npm pack), ${total} bytes together:`,
    sizeTable(record.tarballs),
    '',
    `npm ls --omit=dev --all in the consumer (exit ${record.productionTree.code}):`,
    record.productionTree.text.trimEnd(),
    '',
    record.notes.length === 0 ? 'Noticed, not failed on: nothing.' : 'Noticed, not failed on:',
    ...record.notes,
    '',
  ].join('\n')
  writeFileSync(LAST_RUN_FILE, text)
  return text
}

/** One line for the test's output when it passes: where the record is, and what it holds. */
export function summaryLine(record: ConsumerRecord): string {
  const total = record.tarballs.reduce((sum, t) => sum + t.size, 0)
  const notes = record.notes.length === 0 ? 'no notes' : `${record.notes.length} note${record.notes.length === 1 ? '' : 's'} on third-party types`
  return `consumer record: ${record.tarballs.length} tarballs, ${total} bytes; npm ls exit ${record.productionTree.code}; ${notes}; in test/consumer/.last-run.txt`
}
