/**
 * The ledger's invariant (docs/balances.md): under random interleaved payments (some declined,
 * some settled later, some reversed), partial refunds (some failing), payouts by hand and by
 * schedule, and on PostgreSQL two processes at once, the balance is always the sum of the nets,
 * and that sum is what the payments, refunds and payouts say independently: nothing counted
 * twice, nothing lost.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Tessera } from '../src/composition/app.js';
import { apiBase, databaseKind, injectRaw, startTestApp, type TestContext } from './helpers/harness.js';

const followUpDelayMs = 3000;
const operations = 300;
const cards = [
  '4242424242424242',
  '4242424242424242',
  '4242424242424242',
  '4000000000000002', // declined
  '4000000000000630', // succeeds a few seconds later
  '4000000000000259', // reversed after the fact
  '4000000000005126', // refunds fail
];

/** A small seeded generator (mulberry32), so that a failing run can be replayed. */
function random(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The default schedule (290 bp, half up, + 30), computed here independently of src/ledger/. */
const feeOf = (amount: bigint) => (amount * 290n + 5000n) / 10000n + 30n;

describe(`ledger invariant under random interleaved operations (${databaseKind})`, () => {
  let ctx: TestContext;
  let second: Tessera | undefined;
  before(async () => {
    ctx = await startTestApp({ followUpDelayMs, env: { TESSERA_SANDBOX_FOLLOW_UP_DELAY_MS: String(followUpDelayMs) } });
    // PostgreSQL: a second process on the same database takes half the requests and runs jobs at once.
    if (databaseKind === 'postgres') {
      second = await ctx.secondProcess();
    }
  });
  after(async () => {
    await second?.close();
    await ctx.close();
  });

  test('balance = Σ net = what the payments, refunds and payouts say; each object moves money once', async () => {
    const seed = Number(process.env.TESSERA_TEST_SEED ?? Date.now() % 100_000);
    const next = random(seed);
    const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!;
    const servers = second ? [ctx.tessera, second] : [ctx.tessera];
    const merchants = await Promise.all([ctx.merchant(), ctx.merchant()]);
    for (const [index, merchant] of merchants.entries()) {
      const update = await injectRaw(ctx, {
        method: 'POST',
        url: `/admin/v1/merchants/${merchant.id}/update`,
        headers: { authorization: `Bearer ${ctx.operatorKey}`, 'content-type': 'application/json' },
        payload: JSON.stringify({
          availabilityDays: index,
          payoutSchedule: { interval: 'daily' },
          bankAccount: {
            holderName: 'Shop',
            accountNumber: '000123456789',
            routingNumber: '110000000',
            currency: 'USD',
          },
        }),
      });
      assert.equal(update.statusCode, 200, update.body);
    }
    const call = async (key: string, method: 'GET' | 'POST', path: string, body?: unknown) => {
      const response = await pick(servers).server.inject({
        method,
        url: `${apiBase}${path}`,
        headers: {
          authorization: `Bearer ${key}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
      });
      return { status: response.statusCode, body: response.json() as { code: string; data: any }, raw: response.body };
    };
    const runJobs = () => Promise.all(servers.map((server) => server.jobs.runDue()));
    const succeeded = new Map<string, string[]>(merchants.map((merchant) => [merchant.id, []]));
    const available = async (key: string) => {
      const balance = (await call(key, 'GET', '/balance')).body.data;
      return BigInt(balance.available.find((row: { currency: string }) => row.currency === 'USD')?.amount ?? '0');
    };

    // Three lanes at once, so that requests, jobs and schedules of one merchant interleave.
    const lane = async (steps: number) => {
      for (let step = 0; step < steps; step++) {
        const merchant = pick(merchants);
        const key = merchant.privateKey;
        const roll = next();
        if (roll < 0.45) {
          const method = await call(key, 'POST', '/payment_methods/create', {
            type: 'card',
            card: { cardNo: pick(cards), expMonth: '12', expYear: '2030', securityCode: '123' },
          });
          const amount = String(100 + Math.floor(next() * 20_000));
          const paid = await call(key, 'POST', '/payment/create', {
            amount,
            currency: 'USD',
            paymentMethod: method.body.data.id,
            confirm: true,
          });
          assert.equal(paid.status, 200, paid.raw);
          succeeded.get(merchant.id)!.push(paid.body.data.id);
        } else if (roll < 0.7) {
          const paymentIds = succeeded.get(merchant.id)!;
          if (paymentIds.length === 0) continue;
          const paymentId = pick(paymentIds);
          const refund = await call(key, 'POST', '/refunds/create', {
            paymentId,
            amount: String(1 + Math.floor(next() * 5000)),
          });
          // Too much, or a payment that is not (or no longer) succeeded: refused, nothing written.
          if (refund.status !== 200)
            assert.ok(['amount_too_large', 'invalid_state'].includes(refund.body.code), refund.raw);
        } else if (roll < 0.8) {
          // Sometimes all that is available, sometimes more (refused, naming what is available).
          const amount = next() < 0.5 ? await available(key) : 1n + BigInt(Math.floor(next() * 15_000));
          const payout = await call(key, 'POST', '/payouts/create', { amount: amount.toString(), currency: 'USD' });
          if (payout.status !== 200) {
            // Above the available balance, nothing available, or (before any payment) no balance in USD.
            const refused = payout.body.code === 'amount_too_large' || payout.body.data.param === 'amount';
            assert.ok(refused || payout.body.data.rule === 'no_balance', payout.raw);
          }
        } else if (roll < 0.86) {
          // One of the latest payouts, by hand or by the schedule: canceled while pending, else 409.
          const latest = (await call(key, 'GET', '/payouts?limit=3')).body.data.data as Array<{ id: string }>;
          if (latest.length === 0) continue;
          const canceled = await call(key, 'POST', `/payouts/${pick(latest).id}/cancel`);
          if (canceled.status !== 200) assert.equal(canceled.body.code, 'payout_not_cancelable', canceled.raw);
        } else if (roll < 0.97) {
          ctx.clock.advance(Math.floor(next() * 2 * followUpDelayMs));
          await runJobs();
        } else {
          // Another day: the schedule's next payouts.
          ctx.clock.advance(6 * 60 * 60 * 1000 + Math.floor(next() * 24 * 60 * 60 * 1000));
          await runJobs();
        }
      }
    };
    await Promise.all([lane(operations / 3), lane(operations / 3), lane(operations / 3)]);
    // Every follow-up settled (payments, refunds, payouts), and the schedule run once more.
    for (let round = 0; round < 3; round++) {
      ctx.clock.advance(24 * 60 * 60 * 1000);
      await runJobs();
    }

    const everything = async (key: string, path: string) => {
      const rows: any[] = [];
      let after: string | undefined;
      for (;;) {
        const page = await call(
          key,
          'GET',
          `${path}${path.includes('?') ? '&' : '?'}limit=100${after ? `&startingAfter=${after}` : ''}`,
        );
        assert.equal(page.status, 200, page.raw);
        rows.push(...page.body.data.data);
        if (!page.body.data.hasMore) return rows;
        after = page.body.data.data.at(-1).id;
      }
    };
    for (const merchant of merchants) {
      const key = merchant.privateKey;
      const entries = await everything(key, '/balance_transactions');
      const sumOfNets = entries.reduce((sum, row) => sum + BigInt(row.net), 0n);
      const balance = (await call(key, 'GET', '/balance')).body.data;
      const total = (rows: Array<{ amount: string }>) => rows.reduce((sum, row) => sum + BigInt(row.amount), 0n);
      assert.equal(total(balance.available) + total(balance.pending), sumOfNets, `seed ${seed}: balance = Σ net`);

      const once = new Set<string>();
      for (const entry of entries) {
        const name = `${entry.type} ${entry.source}`;
        assert.ok(!once.has(name), `seed ${seed}: ${name} counted twice`);
        once.add(name);
      }

      // What the objects say, independently of the ledger.
      let expected = 0n;
      for (const payment of await everything(key, '/payment')) {
        const reversed = payment.status === 'failed' && payment.errorCode === 'payment_reversed';
        if (payment.status !== 'succeeded' && !reversed) continue;
        const gross = BigInt(payment.amount);
        expected += gross - feeOf(gross);
        if (reversed) expected -= gross - BigInt(payment.amountReceived);
      }
      for (const refund of await everything(key, '/refunds')) {
        assert.notEqual(refund.status, 'pending', `seed ${seed}: refund ${refund.id} settled`);
        if (refund.status === 'succeeded') expected -= BigInt(refund.amount);
      }
      const payouts = await everything(key, '/payouts');
      for (const payout of payouts) {
        assert.ok(['paid', 'failed', 'canceled'].includes(payout.status), `seed ${seed}: payout ${payout.id} settled`);
        if (payout.status === 'paid') expected -= BigInt(payout.amount);
      }
      assert.equal(sumOfNets, expected, `seed ${seed}: Σ net = payments − fees − reversals − refunds − payouts`);

      // An automatic payout settles exactly its amount (a canceled one nothing), at most once a day.
      const days = new Set<string>();
      for (const payout of payouts.filter((row) => row.automatic)) {
        const day = payout.created.slice(0, 10);
        assert.ok(!days.has(day), `seed ${seed}: two automatic payouts on ${day}`);
        days.add(day);
        const report = await call(key, 'GET', `/payouts/${payout.id}/reconciliation`);
        const settled = report.body.data.rows.reduce((sum: bigint, row: { net: string }) => sum + BigInt(row.net), 0n);
        const settles = payout.status === 'canceled' ? '0' : payout.amount;
        assert.equal(settled.toString(), settles, `seed ${seed}: payout ${payout.id} settles its amount`);
      }
      assert.ok(payouts.length > 0, `seed ${seed}: some payouts were made`);
    }
  });
});
