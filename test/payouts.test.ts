/**
 * Payouts and their reconciliation (docs/balances.md): from the available balance to the bank
 * account, by hand or by schedule, never twice, a failure returning the funds.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Tessera } from '../src/composition/app.js';
import { databaseKind, startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';
import { signedInOwner } from './helpers/dashboard.js';
import { availableUsd as available, eventTypes, getData as get, operatorUpdate, payByCard } from './helpers/balance.js';

const followUpDelayMs = 3000;
const scheduleEveryMs = 60_000;

describe(`payouts (${databaseKind})`, () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await startTestApp({ followUpDelayMs, env: { TESSERA_SANDBOX_FOLLOW_UP_DELAY_MS: String(followUpDelayMs) } });
  });
  after(() => ctx.close());

  const pay = (merchant: TestMerchant, amount: string, orderNo?: string) => payByCard(merchant, { amount, orderNo });

  /** A merchant whose funds are available at once, with a USD bank account ending `last4`. */
  async function merchantWithBank(interval = 'manual', accountNumber = '000123456789') {
    const merchant = await ctx.merchant();
    await operatorUpdate(ctx, merchant, {
      availabilityDays: 0,
      payoutSchedule: { interval },
      bankAccount: { holderName: 'Shop', accountNumber, routingNumber: '110000000', currency: 'USD' },
    });
    return merchant;
  }

  async function runSchedule() {
    ctx.clock.advance(scheduleEveryMs);
    await ctx.runJobs();
  }

  test('a payout needs a bank account (409 saying what to do), a balance in the currency and enough of it', async () => {
    const bare = await ctx.merchant();
    const refused = await bare.call('POST', '/payouts/create', { amount: '100', currency: 'USD' });
    assert.equal(refused.status, 409, refused.raw);
    assert.equal(refused.body.code, 'bank_account_missing');
    assert.match(refused.body.msg, /bankAccount/);

    const merchant = await merchantWithBank();
    await pay(merchant, '1000');
    assert.equal(await available(merchant), '941');
    const tooMuch = await merchant.call('POST', '/payouts/create', { amount: '942', currency: 'USD' });
    assert.equal(tooMuch.status, 400, tooMuch.raw);
    assert.equal(tooMuch.body.code, 'amount_too_large');
    assert.equal(tooMuch.body.data.param, 'amount');
    assert.equal(tooMuch.body.data.available, '941');
    assert.match(tooMuch.body.msg, /available balance: 941/);
    const noBalance = await merchant.call('POST', '/payouts/create', { amount: '1', currency: 'GBP' });
    assert.equal(noBalance.status, 400, noBalance.raw);
    assert.equal(noBalance.body.data.param, 'currency');
    assert.match(noBalance.body.msg, /no balance in GBP/);
    const zero = await merchant.call('POST', '/payouts/create', { amount: '0', currency: 'USD' });
    assert.equal(zero.status, 400, zero.raw);
    assert.equal(zero.body.data.param, 'amount');
    // Nothing was written by the refusals.
    assert.deepEqual((await get(merchant, '/payouts')).data, []);
    assert.equal(await available(merchant), '941');
  });

  test('a manual payout is pending until the bank rail takes it (the next job run), then paid by its arrival date', async () => {
    const merchant = await merchantWithBank();
    await pay(merchant, '1000');
    const created = await merchant.call('POST', '/payouts/create', { amount: '500', currency: 'usd' });
    assert.equal(created.status, 200, created.raw);
    const payout = created.body.data;
    assert.match(payout.id, /^po_\d{19}$/);
    assert.equal(payout.status, 'pending');
    assert.equal(payout.amount, '500');
    assert.equal(payout.automatic, false);
    assert.equal(payout.bankAccountLast4, '6789');
    assert.equal(await available(merchant), '441');
    const [entry] = (await get(merchant, `/balance_transactions?source=${payout.id}`)).data;
    assert.deepEqual([entry.type, entry.net, entry.reportingCategory], ['payout', '-500', 'payout']);
    await ctx.runJobs();
    assert.equal((await get(merchant, `/payouts/${payout.id}`)).status, 'in_transit');

    ctx.clock.advance(followUpDelayMs);
    await ctx.runJobs();
    assert.equal((await get(merchant, `/payouts/${payout.id}`)).status, 'paid');
    assert.deepEqual(await eventTypes(merchant, payout.id), ['payout.created', 'payout.paid']);
    assert.equal(await available(merchant), '441');
  });

  test('a bank account ending 0002 fails the payout, and payout_failure returns the funds', async () => {
    const merchant = await merchantWithBank('manual', '000000000002');
    await pay(merchant, '1000');
    const created = await merchant.call('POST', '/payouts/create', { amount: '941', currency: 'USD' });
    assert.equal(created.status, 200, created.raw);
    assert.equal(await available(merchant), '0');
    await ctx.runJobs();
    ctx.clock.advance(followUpDelayMs);
    await ctx.runJobs();
    const failed = await get(merchant, `/payouts/${created.body.data.id}`);
    assert.equal(failed.status, 'failed');
    assert.equal(failed.failureCode, 'account_closed');
    assert.deepEqual(await eventTypes(merchant, failed.id), ['payout.created', 'payout.failed']);
    const entries = (await get(merchant, `/balance_transactions?source=${failed.id}`)).data;
    assert.deepEqual(
      entries.map((row: { type: string; net: string }) => [row.type, row.net]),
      [
        ['payout_failure', '941'],
        ['payout', '-941'],
      ],
    );
    assert.equal(await available(merchant), '941');
  });

  test('the daily schedule pays the available balance out once a day; the reconciliation lists what it settles', async () => {
    const merchant = await merchantWithBank('daily');
    // A second apart, so that the report's order (created, then id) is theirs.
    const first = await pay(merchant, '1000', 'order-1');
    ctx.clock.advance(1000);
    const second = await pay(merchant, '2000', 'order-2');
    ctx.clock.advance(1000);
    const refund = await merchant.call('POST', '/refunds/create', { paymentId: first.id, amount: '300' });
    assert.equal(refund.status, 200, refund.raw);
    await runSchedule();
    const payouts = (await get(merchant, '/payouts')).data;
    assert.equal(payouts.length, 1);
    const payout = payouts[0];
    // 941 + 1912 − 300.
    assert.equal(payout.amount, '2553');
    assert.equal(payout.automatic, true);
    assert.equal(await available(merchant), '0');

    const report = await merchant.call('GET', `/payouts/${payout.id}/reconciliation`);
    assert.equal(report.status, 200, report.raw);
    assert.deepEqual(report.body.data.payout, payout);
    const rows = report.body.data.rows as Array<Record<string, string>>;
    assert.deepEqual(
      rows.map((row) => [row.type, row.source, row.orderNo, row.gross, row.fee, row.net, row.cardBrand, row.last4]),
      [
        ['payment', first.id, 'order-1', '1000', '59', '941', 'visa', '4242'],
        ['payment', second.id, 'order-2', '2000', '88', '1912', 'visa', '4242'],
        ['refund', refund.body.data.id, 'order-1', '-300', '0', '-300', 'visa', '4242'],
      ],
    );
    assert.equal(rows.reduce((sum, row) => sum + BigInt(row.net!), 0n).toString(), payout.amount);
    const listed = (await get(merchant, `/balance_transactions?payoutId=${payout.id}&limit=100`)).data;
    assert.equal(listed.length, 4, 'the three settled entries and the payout’s own');

    const csv = await merchant.call('GET', `/payouts/${payout.id}/reconciliation`, undefined, { accept: 'text/csv' });
    assert.equal(csv.status, 200);
    assert.match(String(csv.headers['content-type']), /^text\/csv/);
    const lines = csv.raw.trimEnd().split('\r\n');
    assert.equal(
      lines[0],
      'payoutId,balanceTransactionId,type,source,orderNo,created,availableOn,gross,fee,net,currency,cardBrand,last4',
    );
    assert.equal(lines.length, 4);
    assert.ok(lines[3]!.includes(`,refund,${refund.body.data.id},order-1,`));
    assert.ok(lines[3]!.endsWith(`,-300,0,-300,USD,visa,4242`), 'amounts are plain signed numbers');

    // The same day: nothing more, even with new funds; the next day, they are paid out.
    await pay(merchant, '500');
    await runSchedule();
    assert.equal((await get(merchant, '/payouts')).data.length, 1);
    ctx.clock.advance(24 * 60 * 60 * 1000);
    await runSchedule();
    const next = (await get(merchant, '/payouts')).data;
    assert.equal(next.length, 2);
    assert.equal(next[0].amount, '455');

    const missing = await merchant.call('GET', '/payouts/po_1000000000000000001/reconciliation');
    assert.equal(missing.status, 404, missing.raw);
  });

  test('a negative available balance is carried, never paid out', async () => {
    const merchant = await merchantWithBank('daily');
    const payment = await pay(merchant, '1000');
    const refund = await merchant.call('POST', '/refunds/create', { paymentId: payment.id });
    assert.equal(refund.status, 200, refund.raw);
    assert.equal(await available(merchant), '-59');
    await runSchedule();
    assert.deepEqual((await get(merchant, '/payouts')).data, []);
    const refused = await merchant.call('POST', '/payouts/create', { amount: '1', currency: 'USD' });
    assert.equal(refused.status, 400, refused.raw);
    assert.equal(refused.body.data.available, '0');

    ctx.clock.advance(24 * 60 * 60 * 1000);
    await pay(merchant, '2000', '=1+1');
    await runSchedule();
    const [payout] = (await get(merchant, '/payouts')).data;
    // 1912 − 59: the carried debt is settled by this payout.
    assert.equal(payout.amount, '1853');
    const csv = await merchant.call('GET', `/payouts/${payout.id}/reconciliation`, undefined, { accept: 'text/csv' });
    const lines = csv.raw.trimEnd().split('\r\n');
    assert.equal(lines.length, 4, csv.raw);
    assert.ok(lines[3]!.includes(',payment,pt_') && lines[3]!.includes(",'=1+1,"), 'an order number is no formula');
  });

  test("the dashboard's Balance page shows the balance, the schedule and the payouts; a payout's page its reconciliation and CSV", async () => {
    const merchant = await merchantWithBank('daily');
    await pay(merchant, '1000', 'order-77');
    await runSchedule();
    const [payout] = (await get(merchant, '/payouts')).data;
    const owner = await signedInOwner(ctx, merchant.id, 'owner@payouts.test', 'correct horse battery');
    const text = (body: string) => body.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');
    const balance = await owner.get('/dashboard/balance');
    assert.equal(balance.status, 200);
    assert.match(text(balance.body), /USD 0\.00 USD 0\.00 USD account •••• 6789/);
    assert.match(text(balance.body), /daily Bank accounts USD to account •••• 6789/);
    assert.ok(balance.body.includes(`/dashboard/payouts/${payout.id}`));
    const detail = await owner.get(`/dashboard/payouts/${payout.id}`);
    assert.equal(detail.status, 200);
    assert.match(text(detail.body), /payment pt_\d{19} order-77 10\.00 USD 0\.59 USD 9\.41 USD visa •••• 4242/);
    const csv = await owner.get(`/dashboard/payouts/${payout.id}/reconciliation.csv`);
    assert.equal(csv.status, 200);
    assert.match(csv.body, /^payoutId,balanceTransactionId,type,/);
    assert.ok(csv.body.includes(',payment,pt_') && csv.body.includes(',order-77,'));
    const stranger = await signedInOwner(ctx, (await ctx.merchant()).id, 'other@payouts.test', 'correct horse battery');
    assert.equal((await stranger.get(`/dashboard/payouts/${payout.id}`)).status, 404);
  });

  test('one bank account per currency: a payout in a currency goes to its account; a currency without one waits and says why', async () => {
    const merchant = await merchantWithBank('daily');
    await pay(merchant, '1000');
    const method = await merchant.call('POST', '/payment_methods/create', {
      type: 'card',
      card: { cardNo: '4242424242424242', expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    const eur = await merchant.call('POST', '/payment/create', {
      amount: '1000',
      currency: 'EUR',
      paymentMethod: method.body.data.id,
      confirm: true,
    });
    assert.equal(eur.body.data?.status, 'succeeded', eur.raw);
    await runSchedule();
    const [usdPayout, ...others] = (await get(merchant, '/payouts')).data;
    assert.deepEqual(
      [usdPayout.currency, usdPayout.amount, usdPayout.bankAccountLast4, others.length],
      ['USD', '941', '6789', 0],
    );
    const refused = await merchant.call('POST', '/payouts/create', { amount: '100', currency: 'EUR' });
    assert.equal(refused.status, 409, refused.raw);
    assert.equal(refused.body.code, 'bank_account_missing');
    assert.equal(refused.body.data.param, 'currency');
    assert.match(refused.body.msg, /no bank account in EUR .*accounts are in USD/);
    const owner = await signedInOwner(ctx, merchant.id, 'owner@currencies.test', 'correct horse battery');
    const page = (await owner.get('/dashboard/balance')).body.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');
    assert.match(page, /EUR 9\.41 EUR 0\.00 EUR Not paid out: no EUR bank account/);

    await operatorUpdate(ctx, merchant, {
      bankAccount: { holderName: 'Shop', accountNumber: '0532013000', iban: 'DE89370400440532013000', currency: 'EUR' },
    });
    ctx.clock.advance(24 * 60 * 60 * 1000);
    await runSchedule();
    const latest = (await get(merchant, '/payouts')).data;
    assert.equal(latest.length, 2, JSON.stringify(latest));
    assert.deepEqual([latest[0].currency, latest[0].amount, latest[0].bankAccountLast4], ['EUR', '941', '3000']);
  });

  test(
    'two Tessera processes running the schedule at once on one PostgreSQL pay out once',
    { skip: databaseKind !== 'postgres' },
    async () => {
      const second: Tessera = await ctx.secondProcess();
      try {
        const merchants = await Promise.all(Array.from({ length: 5 }, () => merchantWithBank('daily')));
        for (const merchant of merchants) await pay(merchant, '1000');
        ctx.clock.advance(scheduleEveryMs);
        await Promise.all([ctx.runJobs(), second.jobs.runDue()]);
        ctx.clock.advance(scheduleEveryMs);
        await Promise.all([ctx.runJobs(), second.jobs.runDue()]);
        for (const merchant of merchants) {
          const payouts = (await get(merchant, '/payouts')).data;
          assert.equal(payouts.length, 1, JSON.stringify(payouts));
          assert.equal(payouts[0].amount, '941');
          assert.equal(await available(merchant), '0');
        }
      } finally {
        await second.close();
      }
    },
  );
});
