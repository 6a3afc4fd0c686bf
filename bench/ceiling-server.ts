// The ceilings of bench:api: a bare Koa route doing one `pg` insert of a quote-sized row, and one doing one `pg`
// select of an operation by id, nothing else (no auth, no schema validation, no idempotency, no ORM). Run as its own
// process, like the API, by bench/api.ts:
//   DATABASE_URL=... PORT=... node dist/bench/ceiling-server.js (after npm run build), or through tsx
// The table `bench_ceiling` (LIKE quotes) is created by the bench before this starts.
import { randomUUID } from 'node:crypto';
import Koa from 'koa';
import { Pool } from 'pg';

const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 20 }); // the API's pool size (db/orm.ts)
const app = new Koa();

function readJson(req: Koa.Request['req']): Promise<any> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}'));
      } catch (err) {
        reject(err);
      }
    });
    req.on('error', reject);
  });
}

app.use(async (ctx) => {
  if (ctx.method === 'GET' && ctx.path === '/readyz') {
    ctx.body = { status: 'ready' };
    return;
  }
  const read = ctx.method === 'GET' ? /^\/ceiling\/operations\/([0-9a-f-]{36})$/.exec(ctx.path) : null;
  if (read) {
    const { rows } = await pool.query('select * from operations where id = $1', [read[1]]);
    if (!rows[0]) {
      ctx.status = 404;
      return;
    }
    ctx.body = rows[0];
    return;
  }
  if (ctx.method !== 'POST' || ctx.path !== '/ceiling') {
    ctx.status = 404;
    return;
  }
  const body = await readJson(ctx.req);
  const now = new Date();
  const id = randomUUID();
  const expiresAt = new Date(now.getTime() + 30000);
  await pool.query(
    `insert into bench_ceiling (id, customer_id, account_id, source_asset, source_amount, target_asset, target_amount,
       mid_rate, effective_rate, spread, fee_amount, expires_at, consumed_at, consumed_by, created_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, null, null, $13)`,
    [
      id,
      body.customerId,
      body.accountId,
      body.sourceAsset,
      body.sourceAmount,
      body.targetAsset,
      '185.185185',
      '5.4',
      '5.373',
      '0.005',
      '0.926',
      expiresAt,
      now,
    ],
  );
  ctx.status = 201;
  ctx.body = {
    id,
    customerId: body.customerId,
    account: { id: body.accountId, owner: 'Bench Comércio Ltda' },
    sourceAmount: { value: body.sourceAmount, asset: body.sourceAsset },
    targetAmount: { value: '185.18', asset: body.targetAsset },
    effectiveRate: { value: '0.185185', base: body.sourceAsset, quote: body.targetAsset },
    expiresAt: expiresAt.toISOString(),
  };
});

const server = app.listen(Number(process.env.PORT), '127.0.0.1');
const stop = () => {
  server.close();
  void pool.end().finally(() => process.exit(0));
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
