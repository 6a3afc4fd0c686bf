// db/rows.ts (entityFromRow, the read-only mapping of GET /api/operations/{id}, list pages and account parts) must
// give exactly what the EntityManager's own hydration (em.map) gives for the same row: same properties, same
// values, Dec for money and Date for timestamps.
import { expect } from 'chai';
import { EntitySchema } from '@mikro-orm/core';
import { tenantEm } from '../../db/orm';
import { entityFromRow } from '../../db/rows';
import { AccountDocumentSchema, AccountSchema, OperationSchema, QuoteSchema, UboSchema } from '../../db/entities';
import { Dec } from '../../domain/money';
import { stack, newCustomer } from '../helpers/stack';
import { activeAccount } from '../helpers/fixtures';
import { fund } from '../helpers/money';

function normalise(entity: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(entity)) {
    if (v instanceof Dec) out[k] = `Dec(${v.toFixed()})`;
    else if (v instanceof Date) out[k] = `Date(${v.toISOString()})`;
    else out[k] = v;
  }
  return out;
}

describe('entityFromRow', () => {
  it('maps operations, accounts, quotes, UBOs and documents exactly as em.map does', async () => {
    const { services } = await stack();
    const c = await newCustomer('Rows Ltda');
    const account = await activeAccount(c, ['BRL', 'USD'], { withUbo: true });
    await fund(c, account.id, 'BRL', '100.00');
    const em = tenantEm(services.orm, c.customerId);
    const cases: Array<[EntitySchema<any>, string, string[]]> = [
      [OperationSchema, 'operations', []],
      [AccountSchema, 'accounts', []],
      [QuoteSchema, 'quotes', []],
      [UboSchema, 'ubos', []],
      // The list and view paths read documents without their content.
      [AccountDocumentSchema, 'account_documents', ['content']],
    ];
    for (const [schema, table, without] of cases) {
      const rows = (await em.execute(`select * from ${table} where customer_id = ?`, [c.customerId])) as Record<
        string,
        unknown
      >[];
      expect(rows.length, table).to.be.greaterThan(0);
      for (const row of rows) {
        for (const column of without) delete row[column];
        const mapped = normalise(entityFromRow(em, schema, row));
        const hydrated = normalise({ ...(em.fork().map(schema, { ...row }) as object) });
        for (const column of without) delete hydrated[column];
        expect(mapped, table).to.deep.equal(hydrated);
      }
    }
    const [op] = (await em.execute('select * from operations where customer_id = ?', [c.customerId])) as Record<
      string,
      unknown
    >[];
    const mapped = entityFromRow(em, OperationSchema, op);
    expect(mapped.sourceAmount).to.be.instanceOf(Dec);
    expect(mapped.createdAt).to.be.instanceOf(Date);
  });
});
