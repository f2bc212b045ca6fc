// SqliteStoreError: the codes a caller meets before the store does any work, reached with real
// paths in a temporary folder (open_failed) and real option objects (invalid_options). The codes
// of a running store have their own tests: closed and invalid_change_set in sqlite-store.test.ts,
// schema_too_new and migration_failed in schema.test.ts.
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { SqliteStore, SqliteStoreError, type SqliteStoreErrorCode } from '@scanauth/sqlite'
import { useTempFile } from './support/fixture'

const fixture = useTempFile()

/** The error `run` throws or rejects with, checked to be a SqliteStoreError with `code`. */
async function storeError(code: SqliteStoreErrorCode, run: () => unknown): Promise<SqliteStoreError> {
  let caught: unknown
  try {
    const made = await run()
    if (made instanceof SqliteStore) fixture.track(made)
  } catch (error) {
    caught = error
  }
  expect(caught).toBeInstanceOf(SqliteStoreError)
  const error = caught as SqliteStoreError
  expect({ name: error.name, code: error.code }).toEqual({ name: 'SqliteStoreError', code })
  expect(error.message.startsWith('[@scanauth/sqlite] ')).toBe(true)
  return error
}

describe('open_failed', () => {
  it('names the path when its folder does not exist, and creates nothing', async () => {
    const filename = join(fixture.temp.dir, 'missing', 'scanauth.db')
    const error = await storeError('open_failed', () => new SqliteStore({ filename }))
    expect(error.message).toBe(`[@scanauth/sqlite] cannot open ${JSON.stringify(filename)}: Cannot open database because the directory does not exist`)
    expect(error.cause).toBeInstanceOf(Error)
    expect(await readdir(fixture.temp.dir)).toEqual([])
  })

  it('names the path when it is a folder', async () => {
    const filename = join(fixture.temp.dir, 'a-folder')
    await mkdir(filename)
    const error = await storeError('open_failed', () => new SqliteStore({ filename }))
    expect(error.message).toBe(`[@scanauth/sqlite] cannot open ${JSON.stringify(filename)}: unable to open database file (the path is a folder)`)
    expect(error.cause).toMatchObject({ code: 'SQLITE_CANTOPEN' })
    expect(await readdir(filename)).toEqual([])
  })

  it('names the path of a file that is not a database, and leaves the file as it was', async () => {
    const filename = join(fixture.temp.dir, 'notes.txt')
    const text = 'These are notes, not a database. '.repeat(40)
    await writeFile(filename, text)
    const error = await storeError('open_failed', () => new SqliteStore({ filename }))
    expect(error.message).toBe(`[@scanauth/sqlite] cannot open ${JSON.stringify(filename)}: file is not a database`)
    expect(error.cause).toMatchObject({ code: 'SQLITE_NOTADB' })
    expect(await readFile(filename, 'utf8')).toBe(text)
    expect(await readdir(fixture.temp.dir)).toEqual(['notes.txt'])
  })

  it('opens a new file in an existing folder, and opens it again', async () => {
    fixture.openStore()
    await fixture.openStore().close()
    expect(await readdir(fixture.temp.dir)).toContain('scanauth.db')
  })
})

describe('invalid_options', () => {
  it('names the option of new SqliteStore that is wrong', async () => {
    const filename = fixture.temp.filename
    const cases: Array<[unknown, string]> = [
      [{}, 'new SqliteStore: give exactly one of filename and database'],
      [{ filename: '' }, 'new SqliteStore: filename: '],
      [{ filename, busyTimeoutMs: -1 }, 'new SqliteStore: busyTimeoutMs: '],
      [{ filename, synchronous: 'off' }, 'new SqliteStore: synchronous: '],
      [{ filename, bogus: 1 }, 'new SqliteStore: '],
    ]
    for (const [options, start] of cases) {
      const error = await storeError('invalid_options', () => new SqliteStore(options as never))
      expect(error.message.startsWith(`[@scanauth/sqlite] ${start}`)).toBe(true)
    }
    expect(await readdir(fixture.temp.dir)).toEqual([])
  })

  it('names the option of purgeExpired that is wrong', async () => {
    const store = fixture.openStore()
    const error = await storeError('invalid_options', () => store.purgeExpired({ now: Date.now(), retentionMs: -1 }))
    expect(error.message).toMatch(/^\[@scanauth\/sqlite\] SqliteStore\.purgeExpired: retentionMs: /)
    await storeError('invalid_options', () => store.purgeExpired({ now: Date.now(), batchSize: 0 }))
    // No clock of its own: a purge without the service's now is refused, naming what to pass.
    const missing = await storeError('invalid_options', () => store.purgeExpired({} as never))
    expect(missing.message).toMatch(/SqliteStore\.purgeExpired: now: now is required/)
  })
})
