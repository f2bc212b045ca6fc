// The catalog docs/payments.md shows is the examples' (DEFAULT_PLANS of examples/shared): what a
// reader copies from the guide is what the demo server sells, and the answer of `GET /auth/plans`
// the guide shows is that catalog's first plan on the wire.
import { describe, expect, it } from 'vitest'
import { DEFAULT_PLANS } from '../examples/shared/src/pay-config'
import { blocksOf } from './support/markdown'

const blocks = blocksOf('docs/payments.md')

describe('docs/payments.md', () => {
  it('sets up the examples\' plans', () => {
    const setup = blocks.find((b) => b.lang === 'ts' && b.code.includes('const plans: Plan[] = ['))
    expect(setup, 'the ts block that defines `plans`').toBeDefined()
    const literal = /const plans: Plan\[\] = (\[[\s\S]*?\n\])/.exec(setup?.code ?? '')?.[1] ?? '[]'
    // The block is type-checked by doc-snippets.test.ts; here only its value counts.
    const plans: unknown = new Function(`return ${literal}`)()
    expect(plans).toEqual(DEFAULT_PLANS)
  })

  it('shows GET /auth/plans answering the first of them', () => {
    const wire = blocks.find((b) => b.lang === 'text' && b.code.includes('GET  /auth/plans                         →'))
    const first = DEFAULT_PLANS[0]!
    const json = JSON.stringify({ id: first.id, description: first.description, amount_fen: first.amountFen, grant: first.grant })
    expect(wire?.code).toContain(`GET  /auth/plans                         → [${json}, …]`)
  })
})
