/**
 * The dashboard's payments list at 100,000 payments ÷ the same page at 100 (issue 22: ratio
 * ≤ 1.5). One merchant and one real payment through the API (the template, with a customer);
 * then payments copied from it with SQL `generate_series` (new id and time, every tenth failed,
 * every twentieth awaiting capture), with no ANALYZE, as the growth phase does (bench/growth.ts).
 * At each size, each page (the list, a status tab, a quick date range) is rendered `--runs`
 * times through the service's HTTP handler, one at a time, after 5 warm-up renders; the figure is
 * the median. Both sizes are measured in the same run, on the same database.
 *
 *   node --import tsx bench/dashboard-list.ts [--rows 100000] [--runs 40]
 *   TESSERA_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node --import tsx bench/dashboard-list.ts
 */
import { parseArgs } from 'node:util';
import { startTestApp, databaseKind } from '../test/helpers/harness.js';
import { signedInOwner } from '../test/helpers/dashboard.js';

const { values } = parseArgs({
  options: { rows: { type: 'string', default: '100000' }, runs: { type: 'string', default: '40' } },
});
const bigRows = Number(values.rows);
const runs = Number(values.runs);
const smallRows = 100;

const ctx = await startTestApp();
try {
  const merchant = await ctx.merchant({ name: 'Dashboard bench' });
  const owner = await signedInOwner(ctx, merchant.id, 'owner@bench.test', 'correct horse battery');
  const customer = await merchant.call('POST', '/customers/create', { email: 'ada@bench.test', firstName: 'Ada' });
  const method = await merchant.call('POST', '/payment_methods/create', {
    type: 'card',
    card: { cardNo: '4242424242424242', expMonth: '12', expYear: '2030', securityCode: '123' },
  });
  const template = await merchant.call('POST', '/payment/create', {
    amount: '4200',
    currency: 'USD',
    confirm: true,
    paymentMethod: method.body.data.id,
    customerId: customer.body.data.id,
  });
  const templateId = template.body.data.id as string;
  const now = ctx.clock.now();

  /** Payments g = from … to, copied from the template, one a second back from now. */
  const seed = async (from: number, to: number) => {
    for (let start = from; start <= to; start += 20000) {
      const end = Math.min(to, start + 19999);
      await ctx.tessera.db.query(
        `INSERT INTO payments
         SELECT (jsonb_populate_record(NULL::payments, to_jsonb(t) || jsonb_build_object(
           'id', 'pt_' || (3000000000000000000::bigint + g)::text,
           'status', CASE WHEN g % 10 = 0 THEN 'failed' WHEN g % 20 = 5 THEN 'requires_capture' ELSE t.status END,
           'created_at', $2::timestamptz - g * interval '1 second',
           'updated_at', $2::timestamptz - g * interval '1 second', 'order_no', NULL))).*
         FROM payments t, generate_series(${start}, ${end}) AS g WHERE t.id = $1`,
        [templateId, now],
      );
    }
  };

  const today = now.toISOString().slice(0, 10);
  const pages = {
    list: '/dashboard/payments',
    'status tab (failed)': '/dashboard/payments?status=failed',
    'today range': `/dashboard/payments?from=${today}&to=${today}`,
  };

  const measure = async () => {
    const medians: Record<string, number> = {};
    for (const [name, path] of Object.entries(pages)) {
      for (let warm = 0; warm < 5; warm += 1) await owner.get(path);
      const times: number[] = [];
      for (let run = 0; run < runs; run += 1) {
        const started = process.hrtime.bigint();
        const answer = await owner.get(path);
        times.push(Number(process.hrtime.bigint() - started) / 1e6);
        if (answer.status !== 200) throw new Error(`${path} answered ${answer.status}`);
      }
      times.sort((a, b) => a - b);
      medians[name] = times[Math.floor(times.length / 2)]!;
    }
    return medians;
  };

  const progress = (text: string) => process.stderr.write(`${new Date().toISOString()} ${text}\n`);
  await seed(1, smallRows - 1);
  progress(`seeded ${smallRows}; measuring`);
  const small = await measure();
  progress(`measured ${smallRows}; seeding ${bigRows}`);
  const seeding = process.hrtime.bigint();
  await seed(smallRows, bigRows - 1);
  const seedSeconds = Number(process.hrtime.bigint() - seeding) / 1e9;
  progress(`seeded ${bigRows}; measuring`);
  const big = await measure();

  console.log(
    `dashboard payments list, ${databaseKind}: ${smallRows} vs ${bigRows} payments (seeded in ${seedSeconds.toFixed(0)} s), median of ${runs}`,
  );
  console.log('| page | 100 payments (ms) | big (ms) | ratio |');
  console.log('|---|---|---|---|');
  for (const name of Object.keys(pages))
    console.log(
      `| ${name} | ${small[name]!.toFixed(1)} | ${big[name]!.toFixed(1)} | ${(big[name]! / small[name]!).toFixed(2)} |`,
    );
} finally {
  await ctx.close();
}
