/**
 * Disputes from a processor's notifications (docs/disputes.md, Live), through the stand-ins for
 * Stripe and Adyen: signed notifications posted to the account's POST /processor_webhooks/:id
 * open, move and close the dispute, with its money and events, each applied once.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestMerchant } from './helpers/harness.js';
import { stripeTestCards } from './helpers/stripe-stand-in.js';
import { adyenTestCards } from './helpers/adyen-stand-in.js';
import { liveDisputeSetup } from './helpers/live-disputes.js';

describe('disputes from processor notifications', () => {
  const live = liveDisputeSetup();
  const { merchantWith, pay, notify } = live;

  async function disputeOf(merchant: TestMerchant, paymentId: string) {
    const listed = await merchant.call('GET', `/disputes?paymentId=${paymentId}`);
    assert.equal(listed.status, 200, listed.raw);
    return listed.body.data.data as Array<Record<string, any>>;
  }

  async function eventTypes(merchant: TestMerchant, disputeId: string) {
    const listed = await merchant.call('GET', `/events?objectId=${disputeId}&limit=100`);
    return (listed.body.data.data as Array<{ type: string; sequence: number }>)
      .sort((a, b) => a.sequence - b.sequence)
      .map((event) => event.type);
  }

  test('Stripe: charge.dispute.created, funds_withdrawn and closed (won) with funds_reinstated, each once', async () => {
    const { merchant, webhookPath } = await merchantWith('stripe');
    const payment = await pay(merchant, stripeTestCards.succeeds, 'USD');
    const intent = [...live.stripe.api.intents.values()].find(
      (candidate) => (candidate.metadata as Record<string, string>).tessera_payment_id === payment.id,
    )!;
    const dispute = {
      id: 'du_test_1',
      object: 'dispute',
      amount: 2500,
      currency: 'usd',
      payment_intent: intent.id,
      charge: 'ch_test_1',
      reason: 'product_unacceptable',
      status: 'needs_response',
      metadata: {},
    };
    const send = async (type: string, object: object) => {
      live.context.clock.advance(1000);
      const event = live.stripe.event(type, object);
      // Sent twice, as a processor may: the second changes nothing.
      await notify(webhookPath, event.headers, event.rawBody);
      await notify(webhookPath, event.headers, event.rawBody);
    };
    await send('charge.dispute.created', dispute);
    const [opened] = await disputeOf(merchant, payment.id);
    assert.equal(opened!.status, 'needs_response');
    assert.equal(opened!.reason, 'product_unacceptable');
    assert.equal(opened!.amount, '2500');
    assert.deepEqual(opened!.balanceTransactions, []);
    // The chargeback holds the payment: nothing is left to refund.
    const refund = await merchant.call('POST', '/refunds/create', { paymentId: payment.id, amount: '100' });
    assert.equal(refund.body.code, 'amount_too_large', refund.raw);
    await send('charge.dispute.funds_withdrawn', dispute);
    await send('charge.dispute.updated', { ...dispute, status: 'under_review' });
    await send('charge.dispute.closed', { ...dispute, status: 'won' });
    const [closed] = await disputeOf(merchant, payment.id);
    assert.equal(closed!.status, 'won');
    assert.deepEqual(
      closed!.balanceTransactions.map((entry: { type: string; net: string }) => [entry.type, entry.net]),
      [
        ['dispute', '-4000'],
        ['dispute_reversal', '2500'],
      ],
    );
    assert.deepEqual(await eventTypes(merchant, closed!.id), [
      'dispute.created',
      'dispute.funds_withdrawn',
      'dispute.updated',
      'dispute.closed',
      'dispute.funds_reinstated',
    ]);
    await send('charge.dispute.funds_reinstated', { ...dispute, status: 'won' });
    assert.equal((await eventTypes(merchant, closed!.id)).length, 5);
  });

  test('Adyen: NOTIFICATION_OF_CHARGEBACK opens, CHARGEBACK withdraws, CHARGEBACK_REVERSED wins it back', async () => {
    const { merchant, webhookPath } = await merchantWith('adyen');
    const payment = await pay(merchant, adyenTestCards.approved, 'EUR');
    // Adyen names the chargeback by the payment's pspReference; the merchantReference finds the payment.
    const pspReference = `PSP${Date.now()}`;
    const send = async (eventCode: string) => {
      live.context.clock.advance(1000);
      const body = live.adyen.notificationBody([
        live.adyen.notificationItem({
          eventCode,
          pspReference: `CB${eventCode.length}000000000001`,
          originalReference: pspReference,
          merchantReference: payment.id,
          amount: { value: 2500, currency: 'EUR' },
          reason: '10.4',
        }),
      ]);
      await notify(webhookPath, { 'content-type': 'application/json' }, body);
      await notify(webhookPath, { 'content-type': 'application/json' }, body);
    };
    await send('NOTIFICATION_OF_CHARGEBACK');
    const [opened] = await disputeOf(merchant, payment.id);
    assert.equal(opened!.stage, 'chargeback');
    assert.equal(opened!.status, 'needs_response');
    assert.equal(opened!.networkReasonCode, '10.4');
    await send('CHARGEBACK');
    await send('CHARGEBACK_REVERSED');
    const [won] = await disputeOf(merchant, payment.id);
    assert.equal(won!.status, 'won');
    assert.deepEqual(
      won!.balanceTransactions.map((entry: { type: string; amount: string }) => [entry.type, entry.amount]),
      [
        ['dispute', '-2500'],
        ['dispute_reversal', '2500'],
      ],
    );
    assert.equal((await merchant.call('GET', `/payment/${payment.id}`)).body.data.amountDisputed, '0');
  });
});
