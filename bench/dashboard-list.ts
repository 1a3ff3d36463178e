/**
 * The dashboard's payments list at 100,000 payments ÷ the same page at 100 (issue 22: ratio
 * ≤ 1.5). Two merchants, each with one real payment through the API (the template, with a
 * customer); then payments copied from it with SQL `generate_series` (new id and time, every tenth
 * failed, every twentieth awaiting capture), with no ANALYZE, as the growth phase does
 * (bench/growth.ts). Each page (the list, a status tab, a quick date range) is rendered `--runs`
 * times through the service's HTTP handler, one at a time, after 5 warm-up renders; the figure is
 * the median. The big merchant is measured at 100 payments ("before"); after it grows to the big
 * size it is measured again, its renders alternating with those of the small merchant (still 100
 * payments, in the same table: "beside"), so that the load of a shared machine — and the
 * autovacuum the seeding sets off — falls on both sizes alike. Both ratios are printed: to the
 * small merchant beside it, and to itself before.
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
  const now = ctx.clock.now();
  /** A merchant with a signed-in owner and one real payment through the API (the template). */
  const shop = async (name: string) => {
    const merchant = await ctx.merchant({ name });
    const owner = await signedInOwner(ctx, merchant.id, `owner@${name}.test`, 'correct horse battery');
    const customer = await merchant.call('POST', '/customers/create', { email: `ada@${name}.test`, firstName: 'Ada' });
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
    return { owner, templateId: template.body.data.id as string };
  };

  /** Payments g = from … to, copied from the template, one a second back from now. */
  const seed = async (templateId: string, idBase: bigint, from: number, to: number) => {
    for (let start = from; start <= to; start += 20000) {
      const end = Math.min(to, start + 19999);
      await ctx.tessera.db.query(
        `INSERT INTO payments
         SELECT (jsonb_populate_record(NULL::payments, to_jsonb(t) || jsonb_build_object(
           'id', 'pt_' || ($3::bigint + g)::text,
           'status', CASE WHEN g % 10 = 0 THEN 'failed' WHEN g % 20 = 5 THEN 'requires_capture' ELSE t.status END,
           'created_at', $2::timestamptz - g * interval '1 second',
           'updated_at', $2::timestamptz - g * interval '1 second', 'order_no', NULL))).*
         FROM payments t, generate_series(${start}, ${end}) AS g WHERE t.id = $1`,
        [templateId, now, idBase.toString()],
      );
    }
  };

  const today = now.toISOString().slice(0, 10);
  const pages = {
    list: '/dashboard/payments',
    'status tab (failed)': '/dashboard/payments?status=failed',
    'today range': `/dashboard/payments?from=${today}&to=${today}`,
  };
  type Owner = Awaited<ReturnType<typeof shop>>['owner'];
  const render = async (owner: Owner, path: string) => {
    const started = process.hrtime.bigint();
    const answer = await owner.get(path);
    if (answer.status !== 200) throw new Error(`${path} answered ${answer.status}`);
    return Number(process.hrtime.bigint() - started) / 1e6;
  };
  const median = (times: number[]) => [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)]!;

  /** Each page's median for each owner, their renders alternating so that the machine's load falls on both alike. */
  const measure = async (owners: Owner[]) => {
    const medians: Array<Record<string, number>> = owners.map(() => ({}));
    for (const [name, path] of Object.entries(pages)) {
      for (let warm = 0; warm < 5; warm += 1) for (const owner of owners) await render(owner, path);
      const times: number[][] = owners.map(() => []);
      for (let run = 0; run < runs; run += 1) {
        for (let index = 0; index < owners.length; index += 1) {
          // The order alternates too, so that neither is always the one after the other.
          const which = run % 2 === 0 ? index : owners.length - 1 - index;
          times[which]!.push(await render(owners[which]!, path));
        }
      }
      owners.forEach((_, index) => (medians[index]![name] = median(times[index]!)));
    }
    return medians;
  };

  const progress = (text: string) => process.stderr.write(`${new Date().toISOString()} ${text}\n`);
  const small = await shop('small');
  const big = await shop('big');
  await seed(small.templateId, 3000000000000000000n, 1, smallRows - 1);
  await seed(big.templateId, 4000000000000000000n, 1, smallRows - 1);
  progress(`seeded ${smallRows} each; measuring`);
  const [before] = await measure([big.owner]);
  progress(`measured ${smallRows}; seeding ${bigRows}`);
  const seeding = process.hrtime.bigint();
  await seed(big.templateId, 4000000000000000000n, smallRows, bigRows - 1);
  const seedSeconds = Number(process.hrtime.bigint() - seeding) / 1e9;
  progress(`seeded ${bigRows}; measuring`);
  const [beside, after] = await measure([small.owner, big.owner]);

  console.log(
    `dashboard payments list, ${databaseKind}: ${smallRows} vs ${bigRows} payments (seeded in ${seedSeconds.toFixed(0)} s), median of ${runs}`,
  );
  console.log(
    '| page | big merchant at 100 (ms) | small merchant at 100, beside (ms) | big merchant at big (ms) | ratio to beside | ratio to before |',
  );
  console.log('|---|---|---|---|---|---|');
  for (const name of Object.keys(pages))
    console.log(
      `| ${name} | ${before![name]!.toFixed(1)} | ${beside![name]!.toFixed(1)} | ${after![name]!.toFixed(1)} | ${(after![name]! / beside![name]!).toFixed(2)} | ${(after![name]! / before![name]!).toFixed(2)} |`,
    );
} finally {
  await ctx.close();
}
