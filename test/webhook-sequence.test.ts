import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { databaseKind, startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';

/*
 * docs/webhooks.md#sequence-telling-a-stale-event-from-a-new-one: every event carries `sequence`, which grows with each event of the same object, in
 * the webhook body and on GET /events, so that a receiver can ignore a stale event (docs/webhooks.md#sequence-telling-a-stale-event-from-a-new-one).
 * Assigned in the event's transaction: concurrent changes of one object never share a number.
 */

const cards = {
  visa: '4242424242424242',
  /** docs/api.md#sandbox-test-cards: succeeds, then is reversed after the fact (a second event for the same payment). */
  reversedLater: '4000000000000259',
};
const followUpDelayMs = 3000;

interface EventBody {
  id: string;
  type: string;
  sequence: number;
  data: { id: string };
}

describe(`event sequence (${databaseKind})`, () => {
  let ctx: TestContext;
  let hook: Receiver;

  before(async () => {
    ctx = await startTestApp({ followUpDelayMs });
    hook = await startReceiver();
  });
  after(async () => {
    await hook.close();
    await ctx.close();
  });

  async function pay(merchant: TestMerchant, card: string, amount = '1000') {
    const method = await merchant.call('POST', '/payment_methods/create', {
      type: 'card',
      card: { cardNo: card, expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    assert.equal(method.status, 200, method.raw);
    const payment = await merchant.call('POST', '/payment/create', {
      amount,
      currency: 'USD',
      paymentMethod: method.body.data.id,
      confirm: true,
    });
    assert.equal(payment.status, 200, payment.raw);
    return payment.body.data as { id: string; status: string };
  }

  /** Every event of the object, oldest first, as GET /events answers them. */
  async function eventsOf(merchant: TestMerchant, objectId: string): Promise<EventBody[]> {
    const response = await merchant.call('GET', `/events?objectId=${objectId}&limit=100`);
    assert.equal(response.status, 200, response.raw);
    return (response.body.data.data as EventBody[]).slice().reverse();
  }

  async function settle() {
    ctx.clock.advance(followUpDelayMs);
    await ctx.runJobs();
  }

  test('a payment reversed after the fact: its second event has a higher sequence, in the body and on GET /events', async () => {
    const merchant = await ctx.merchant();
    const endpoint = await merchant.call('POST', '/webhook_endpoints/create', { url: hook.url('/reversal') });
    assert.equal(endpoint.status, 200, endpoint.raw);
    const payment = await pay(merchant, cards.reversedLater);
    assert.equal(payment.status, 'succeeded');
    await settle();

    const events = await eventsOf(merchant, payment.id);
    assert.deepEqual(
      events.map((event) => [event.type, event.sequence]),
      [
        ['payment.succeeded', 1],
        ['payment.failed', 2],
      ],
    );
    const retrieved = await merchant.call('GET', `/events/${events[1]!.id}`);
    assert.equal(retrieved.body.data.sequence, 2, retrieved.raw);

    await ctx.tessera.webhookDispatcher.runOnce();
    await hook.waitFor(2);
    const received = hook.requests
      .filter((request) => request.path === '/reversal')
      .map((request) => JSON.parse(request.body) as EventBody);
    assert.deepEqual(received.map((body) => [body.type, body.sequence]).sort(), [
      ['endpoint_payment.payment_failed', 2],
      ['endpoint_payment.payment_succeeded', 1],
    ]);
    // The sequence sits in the signed body itself, before data (the stored canonical form).
    for (const request of hook.requests.filter((each) => each.path === '/reversal')) {
      assert.match(
        request.body,
        /^\{"id":"evt_\d{19}","apiVersion":"v1","type":"[^"]+","created":"[^"]+","sequence":\d+,"data":\{/,
      );
    }
  });

  test('refunds racing on one payment: each refund numbers its own events 1, 2; no number is shared', async () => {
    const merchant = await ctx.merchant();
    const payment = await pay(merchant, cards.visa, '1000');
    const responses = await Promise.all(
      Array.from({ length: 8 }, () =>
        merchant.call('POST', '/refunds/create', { paymentId: payment.id, amount: '100' }),
      ),
    );
    for (const response of responses) assert.equal(response.status, 200, response.raw);
    await settle();
    for (const response of responses) {
      const events = await eventsOf(merchant, response.body.data.id);
      assert.deepEqual(
        events.map((event) => [event.type, event.sequence]),
        [
          ['refund.pending', 1],
          ['refund.succeeded', 2],
        ],
      );
    }
    assert.deepEqual(
      (await eventsOf(merchant, payment.id)).map((event) => event.sequence),
      [1],
    );
  });

  test('concurrent changes of one object get distinct, growing numbers in the order they were recorded', async () => {
    const merchant = await ctx.merchant();
    const customer = await merchant.call('POST', '/customers/create', { email: 'ada@example.com', firstName: 'Ada' });
    assert.equal(customer.status, 200, customer.raw);
    const invoice = await merchant.call('POST', '/invoices/create', {
      customerId: customer.body.data.id,
      currency: 'USD',
      lineItems: [{ description: 'Consulting', amount: '1000', quantity: 1 }],
      collectionMethod: 'send_invoice',
      daysUntilDue: 14,
    });
    assert.equal(invoice.status, 200, invoice.raw);
    const invoiceId = invoice.body.data.id as string;
    const changes = 12;
    const updates = await Promise.all(
      Array.from({ length: changes }, (_, index) =>
        merchant.call('POST', `/invoices/${invoiceId}/update`, { description: `change ${index}` }),
      ),
    );
    for (const update of updates) assert.equal(update.status, 200, update.raw);

    const events = await eventsOf(merchant, invoiceId);
    assert.equal(events.length, changes + 1);
    assert.deepEqual(
      events.map((event) => event.sequence).sort((a, b) => a - b),
      Array.from({ length: changes + 1 }, (_, index) => index + 1),
    );
    // The last change committed carries the highest number: its data is the invoice as it now is.
    const now = await merchant.call('GET', `/invoices/${invoiceId}`);
    const newest = events.reduce((best, event) => (event.sequence > best.sequence ? event : best));
    assert.equal((newest.data as { description?: string }).description, now.body.data.description);
  });
});
