import { Readable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { firstQueryValues, readRawBody } from '@scanauth/core/node'

describe('readRawBody', () => {
  it('reads a stream to its end', async () => {
    expect((await readRawBody(Readable.from([Buffer.from('ab'), Buffer.from('cd')]), 10)).toString()).toBe('abcd')
  })
  it('keeps at most maxBytes + 1 bytes but drains everything', async () => {
    const stream = Readable.from([Buffer.alloc(8, 1), Buffer.alloc(8, 2), Buffer.alloc(8, 3)])
    const body = await readRawBody(stream, 10)
    expect(body.length).toBe(11)
    expect(stream.readableEnded).toBe(true)
  })
})

describe('firstQueryValues', () => {
  it('keeps the first string of each parameter and drops nested values', () => {
    expect(firstQueryValues({ a: 'x', b: ['y', 'z'], c: { nested: '1' }, d: undefined })).toEqual({ a: 'x', b: 'y' })
    expect(firstQueryValues(undefined)).toEqual({})
  })
})
