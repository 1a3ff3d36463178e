/**
 * Canceling a payout (docs/balances.md, Canceling a payout): while pending its money comes back
 * by a `payout_cancel` entry with `payout.canceled`; once the bank rail has it, 409 naming its
 * status and nothing written; a cancel racing the job that sends it has one winner.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Tessera } from '../src/composition/app.js';
import { databaseKind, startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';
import { availableUsd as available, eventTypes, getData as get, operatorUpdate, payByCard } from './helpers/balance.js';

const followUpDelayMs = 3000;

describe(`payout cancel (${databaseKind})`, () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await startTestApp({ followUpDelayMs, env: { TESSERA_SANDBOX_FOLLOW_UP_DELAY_MS: String(followUpDelayMs) } });
  });
  after(() => ctx.close());

  /** A merchant with 1000 USD (941 net) available at once and a USD bank account, paid by hand. */
  async function merchantWithFunds(): Promise<TestMerchant> {
    const merchant = await ctx.merchant();
    await operatorUpdate(ctx, merchant, {
      availabilityDays: 0,
      payoutSchedule: { interval: 'manual' },
      bankAccount: { holderName: 'Shop', accountNumber: '000123456789', routingNumber: '110000000', currency: 'USD' },
    });
    await payByCard(merchant, { amount: '1000' });
    return merchant;
  }

  async function entries(merchant: TestMerchant, payoutId: string): Promise<string[][]> {
    const rows = (await get(merchant, `/balance_transactions?source=${payoutId}`)).data;
    return rows.map((row: { type: string; net: string; reportingCategory: string }) => [
      row.type,
      row.net,
      row.reportingCategory,
    ]);
  }

  async function createPayout(merchant: TestMerchant, amount: string) {
    const created = await merchant.call('POST', '/payouts/create', { amount, currency: 'USD' });
    assert.equal(created.status, 200, created.raw);
    assert.equal(created.body.data.status, 'pending');
    return created.body.data as { id: string };
  }

  test('a pending payout is canceled: payout_cancel returns its amount, payout.canceled is sent, the bank never gets it', async () => {
    const merchant = await merchantWithFunds();
    const payout = await createPayout(merchant, '600');
    assert.equal(await available(merchant), '341');
    // A second later, so that the entries' order (newest first) is theirs.
    ctx.clock.advance(1000);
    const canceled = await merchant.call('POST', `/payouts/${payout.id}/cancel`);
    assert.equal(canceled.status, 200, canceled.raw);
    assert.equal(canceled.body.data.status, 'canceled');
    assert.equal(await available(merchant), '941');
    assert.deepEqual(await entries(merchant, payout.id), [
      ['payout_cancel', '600', 'payout_reversal'],
      ['payout', '-600', 'payout'],
    ]);
    // The job that would have sent it finds it canceled, and nothing more happens to it.
    await ctx.runJobs();
    ctx.clock.advance(followUpDelayMs);
    await ctx.runJobs();
    assert.equal((await get(merchant, `/payouts/${payout.id}`)).status, 'canceled');
    assert.deepEqual(await eventTypes(merchant, payout.id), ['payout.created', 'payout.canceled']);
    assert.equal(await available(merchant), '941');

    const again = await merchant.call('POST', `/payouts/${payout.id}/cancel`);
    assert.equal(again.status, 409, again.raw);
    assert.equal(again.body.code, 'payout_not_cancelable');
    assert.equal(again.body.data.status, 'canceled');
    assert.match(again.body.msg, /its status is canceled/);
    const unknown = await merchant.call('POST', '/payouts/po_1000000000000000001/cancel');
    assert.equal(unknown.status, 404, unknown.raw);
    const stranger = await ctx.merchant();
    const foreign = await stranger.call('POST', `/payouts/${payout.id}/cancel`);
    assert.equal(foreign.status, 404, foreign.raw);
  });

  test('a payout the bank has (in_transit, then paid) is not canceled: 409 naming its status, nothing written', async () => {
    const merchant = await merchantWithFunds();
    const payout = await createPayout(merchant, '941');
    await ctx.runJobs();
    const refused = await merchant.call('POST', `/payouts/${payout.id}/cancel`);
    assert.equal(refused.status, 409, refused.raw);
    assert.equal(refused.body.code, 'payout_not_cancelable');
    assert.equal(refused.body.data.status, 'in_transit');
    assert.match(refused.body.msg, /its status is in_transit/);
    ctx.clock.advance(followUpDelayMs);
    await ctx.runJobs();
    const late = await merchant.call('POST', `/payouts/${payout.id}/cancel`);
    assert.equal(late.status, 409, late.raw);
    assert.equal(late.body.data.status, 'paid');
    assert.deepEqual(await entries(merchant, payout.id), [['payout', '-941', 'payout']]);
    assert.deepEqual(await eventTypes(merchant, payout.id), ['payout.created', 'payout.paid']);
    assert.equal(await available(merchant), '0');
  });

  test('a cancel racing the job that sends the payout: one wins, the money moves once', async () => {
    // PostgreSQL: a second Tessera process on the same database runs the jobs too.
    const second: Tessera | undefined = databaseKind === 'postgres' ? await ctx.secondProcess() : undefined;
    try {
      const merchant = await merchantWithFunds();
      for (let round = 0; round < 6; round++) {
        const before = BigInt(await available(merchant));
        const payout = await createPayout(merchant, '100');
        const [answer] = await Promise.all([
          merchant.call('POST', `/payouts/${payout.id}/cancel`),
          ctx.runJobs(),
          second?.jobs.runDue(),
        ]);
        ctx.clock.advance(followUpDelayMs);
        await ctx.runJobs();
        const final = await get(merchant, `/payouts/${payout.id}`);
        if (answer.status === 200) {
          assert.equal(final.status, 'canceled');
          // Made at the same clock time: compared as a set.
          assert.deepEqual((await eventTypes(merchant, payout.id)).sort(), ['payout.canceled', 'payout.created']);
          assert.equal(BigInt(await available(merchant)), before);
        } else {
          assert.equal(answer.status, 409, answer.raw);
          assert.equal(answer.body.data.status, 'in_transit');
          assert.equal(final.status, 'paid');
          assert.deepEqual(await eventTypes(merchant, payout.id), ['payout.created', 'payout.paid']);
          assert.equal(BigInt(await available(merchant)), before - 100n);
        }
      }
    } finally {
      await second?.close();
    }
  });
});
