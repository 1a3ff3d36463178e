/**
 * A payout's reconciliation report at 100,000 settled entries ÷ streaming the same rows with a bare
 * query (issue 43: ratio ≤ 2). One merchant with a real payment through the API (the template);
 * then payments copied from it with SQL `generate_series` and a `payment` balance transaction for
 * each, all available; the payout schedule then settles them in one automatic payout. Measured
 * `--runs` times, alternated: the CSV report through HTTP (a real socket, the body read as it
 * comes), and a bare keyset query over the payout's rows in batches of the same size, reading the
 * report's columns (`ratio`) and, for comparison, the entries' own columns only. Medians, and
 * the process's largest RSS growth during a report (constant memory: it should not grow with rows).
 *
 *   node --import tsx bench/reconciliation.ts [--rows 100000] [--runs 5]
 *   TESSERA_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node --import tsx bench/reconciliation.ts
 */
import { parseArgs } from 'node:util';
import { apiBase, databaseKind, injectRaw, startTestApp } from '../test/helpers/harness.js';
import { selectReconciliationBatch } from '../src/payouts/queries.js';

const { values } = parseArgs({
  options: { rows: { type: 'string', default: '100000' }, runs: { type: 'string', default: '5' } },
});
const rows = Number(values.rows);
const runs = Number(values.runs);
const batchSize = 500;

const median = (samples: number[]) => [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)]!;

const ctx = await startTestApp();
try {
  const merchant = await ctx.merchant({ name: 'Reconciliation bench' });
  const settings = await injectRaw(ctx, {
    method: 'POST',
    url: `/admin/v1/merchants/${merchant.id}/update`,
    headers: { authorization: `Bearer ${ctx.operatorKey}`, 'content-type': 'application/json' },
    payload: JSON.stringify({
      availabilityDays: 0,
      payoutSchedule: { interval: 'daily' },
      bankAccount: { holderName: 'Bench', accountNumber: '000123456789', routingNumber: '110000000', currency: 'USD' },
    }),
  });
  if (settings.statusCode !== 200) throw new Error(settings.body);
  const method = await merchant.call('POST', '/payment_methods/create', {
    type: 'card',
    card: { cardNo: '4242424242424242', expMonth: '12', expYear: '2030', securityCode: '123' },
  });
  const template = await merchant.call('POST', '/payment/create', {
    amount: '4200',
    currency: 'USD',
    confirm: true,
    paymentMethod: method.body.data.id,
    orderNo: 'bench',
  });
  const templateId = template.body.data.id as string;
  const now = ctx.clock.now();
  const seedStarted = performance.now();
  for (let start = 1; start <= rows; start += 20000) {
    const end = Math.min(rows, start + 19999);
    await ctx.tessera.db.query(
      `INSERT INTO payments
       SELECT (jsonb_populate_record(NULL::payments, to_jsonb(t) || jsonb_build_object(
         'id', 'pt_' || (2000000000000000000::bigint + g)::text, 'order_no', 'order-' || g::text,
         'created_at', $2::timestamptz - g * interval '1 second',
         'updated_at', $2::timestamptz - g * interval '1 second'))).*
       FROM payments t, generate_series($3::int, $4::int) AS g WHERE t.id = $1`,
      [templateId, now, start, end],
    );
    await ctx.tessera.db.query(
      `INSERT INTO balance_transactions (id, merchant_id, mode, type, source, amount, fee, fee_details, net, currency,
         available_on, payout_id, reporting_category, created_at)
       SELECT 'txn_' || (2000000000000000000::bigint + g)::text, $1, 'test', 'payment',
         'pt_' || (2000000000000000000::bigint + g)::text, 4200, 152,
         '[{"type":"tessera_fee","amount":"152","description":"Processing fee (2.9% + 30)"}]'::jsonb, 4048, 'USD',
         $2::timestamptz - g * interval '1 second', NULL, 'charge', $2::timestamptz - g * interval '1 second'
       FROM generate_series($3::int, $4::int) AS g`,
      [merchant.id, now, start, end],
    );
  }
  const seededMs = performance.now() - seedStarted;
  ctx.clock.advance(60_000);
  const claimStarted = performance.now();
  await ctx.runJobs();
  const claimMs = performance.now() - claimStarted;
  const payouts = await merchant.call('GET', '/payouts');
  const payout = payouts.body.data.data[0] as { id: string; amount: string };
  if (!payout) throw new Error(`no payout: ${payouts.raw}`);

  const address = await ctx.tessera.server.listen({ port: 0, host: '127.0.0.1' });
  /** The CSV report through HTTP, read as it comes: its time, lines and the largest RSS growth. */
  const report = async () => {
    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    const started = performance.now();
    const response = await fetch(`${address}${apiBase}/payouts/${payout.id}/reconciliation`, {
      headers: { authorization: `Bearer ${merchant.privateKey}`, accept: 'text/csv' },
    });
    let lines = 0;
    const decoder = new TextDecoder();
    for await (const chunk of response.body!) {
      lines += decoder.decode(chunk, { stream: true }).split('\n').length - 1;
      peak = Math.max(peak, process.memoryUsage().rss);
    }
    return { ms: performance.now() - started, lines, growthMb: (peak - baseline) / 1e6 };
  };
  /**
   * The same rows with a bare keyset query, batch by batch: the report's columns (its order number
   * and card come from each entry's payment, by primary key), or with `entriesOnly` the entries'
   * own columns.
   */
  const bare = async (entriesOnly = false) => {
    const started = performance.now();
    let count = 0;
    let after: { created_at: Date; id: string } | undefined;
    const payment = entriesOnly
      ? ''
      : `, (SELECT p.order_no || ' ' || (p.details->'paymentMethodDetails'->'card'->>'last4')
           FROM payments p WHERE p.id = t.source) AS payment`;
    for (;;) {
      // The same planner settings as the report's batches (src/payouts/service.ts).
      const batch = await ctx.tessera.db.transaction(async (tx) => {
        await tx.execute('SET LOCAL enable_bitmapscan = off');
        await tx.execute('SET LOCAL enable_sort = off');
        return tx.query<{ created_at: Date; id: string }>(
          `SELECT t.id, t.type, t.source, t.amount::text, t.fee::text, t.net::text, t.currency, t.available_on,
           t.created_at${payment}
         FROM balance_transactions t WHERE t.payout_id = $1 AND t.source <> $1
         ${after ? 'AND t.created_at >= $2 AND (t.created_at > $2 OR t.id > $3)' : ''}
         ORDER BY t.created_at, t.id LIMIT ${batchSize}`,
          after ? [payout.id, after.created_at, after.id] : [payout.id],
        );
      });
      count += batch.length;
      if (batch.length < batchSize) return { ms: performance.now() - started, count };
      after = batch[batch.length - 1];
    }
  };
  /** The report's own statement, batch by batch, without the HTTP answer: where the report's time goes. */
  const reportQuery = async () => {
    const started = performance.now();
    let after: { created: Date; id: string } | undefined;
    for (;;) {
      const batch = await selectReconciliationBatch(ctx.tessera.db, payout.id, after, batchSize);
      const last = batch[batch.length - 1];
      if (batch.length < batchSize || !last) return performance.now() - started;
      after = { created: last.created_at_cursor, id: last.id };
    }
  };
  await report();
  await bare();
  await bare(true);
  await reportQuery();
  const reportQueries: number[] = [];
  const reports: number[] = [];
  const bares: number[] = [];
  const entryBares: number[] = [];
  let growth = 0;
  for (let run = 0; run < runs; run++) {
    const measured = await report();
    if (measured.lines !== rows + 2) throw new Error(`the report had ${measured.lines} lines, not ${rows + 2}`);
    reports.push(measured.ms);
    growth = Math.max(growth, measured.growthMb);
    const plain = await bare();
    if (plain.count !== rows + 1) throw new Error(`the bare query read ${plain.count} rows`);
    bares.push(plain.ms);
    entryBares.push((await bare(true)).ms);
    reportQueries.push(await reportQuery());
  }
  const result = {
    store: databaseKind,
    rows,
    seededMs: Math.round(seededMs),
    scheduledPayoutMs: Math.round(claimMs),
    payoutAmount: payout.amount,
    reportMedianMs: Math.round(median(reports)),
    bareQueryMedianMs: Math.round(median(bares)),
    ratio: Number((median(reports) / median(bares)).toFixed(2)),
    entriesOnlyQueryMedianMs: Math.round(median(entryBares)),
    ratioToEntriesOnly: Number((median(reports) / median(entryBares)).toFixed(2)),
    reportStatementMedianMs: Math.round(median(reportQueries)),
    largestRssGrowthMb: Math.round(growth),
  };
  console.log(JSON.stringify(result, null, 2));
} finally {
  await ctx.close();
}
