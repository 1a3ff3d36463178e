import { createHmac } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { displayStatusOf, paymentStatuses } from '../src/payments/states.js';
import type { Processor } from '../src/processor/processor.js';
import { createSandboxProcessor } from '../src/processor/sandbox.js';
import {
  legacyOnDynamicEndpoint,
  databaseKind,
  startTestApp,
  type ApiResponse,
  type TestContext,
  type TestMerchant,
} from './helpers/harness.js';
import { startReceiver, type ReceivedRequest, type Receiver } from './helpers/receiver.js';

const cards = {
  visa: '4242424242424242',
  declined: '4000000000000002',
  settlesLater: '4000000000000630',
  reversedLater: '4000000000000259',
  /** docs/api.md#sandbox-test-cards: every refund goes pending, then failed with card_closed. */
  refundFails: '4000000000005126',
  /** Every refund succeeds at once. */
  refundSucceedsAtOnce: '4000000000007726',
};
const followUpDelayMs = 3000;

/** HMAC-SHA256(key, request-time + "." + raw body) as upper-case hex, computed independently of the service. */
function hmac(key: string, requestTime: string, body: Buffer): string {
  return createHmac('sha256', key)
    .update(Buffer.concat([Buffer.from(`${requestTime}.`), body]))
    .digest('hex')
    .toUpperCase();
}

function signedWith(receiver: Receiver, request: ReceivedRequest, key: string): boolean {
  const requestTime = receiver.rawHeader(request, 'Request-Time');
  const signature = receiver.rawHeader(request, 'Signature');
  assert.ok(requestTime && signature, 'Request-Time and Signature headers');
  return signature.toUpperCase() === hmac(key, requestTime, request.rawBody);
}

function assertRefused(response: ApiResponse, code: string, param: string, status = 400) {
  assert.equal(response.status, status, response.raw);
  assert.equal(response.body.code, code, response.raw);
  assert.equal(response.body.data?.param, param, response.raw);
}

describe('displayStatus with refunds (docs/api.md#refunds)', () => {
  test('a succeeded payment shows refund_pending, then partially_refunded or refunded', () => {
    const totals = (refunded: bigint, pending: bigint) => ({ received: 1000n, refunded, pending });
    assert.equal(displayStatusOf('succeeded', totals(0n, 0n)), 'succeeded');
    assert.equal(displayStatusOf('succeeded', totals(0n, 1n)), 'refund_pending');
    assert.equal(displayStatusOf('succeeded', totals(999n, 1n)), 'refund_pending');
    assert.equal(displayStatusOf('succeeded', totals(1n, 0n)), 'partially_refunded');
    assert.equal(displayStatusOf('succeeded', totals(1000n, 0n)), 'refunded');
  });

  test('any other status shows itself whatever its refunds', () => {
    for (const status of paymentStatuses.filter((each) => each !== 'succeeded')) {
      assert.equal(displayStatusOf(status, { received: 500n, refunded: 500n, pending: 0n }), displayStatusOf(status));
    }
  });
});

describe(`refunds (${databaseKind})`, () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await startTestApp({ followUpDelayMs });
  });
  after(() => ctx.close());

  async function paid(
    merchant: TestMerchant,
    {
      card = cards.visa,
      amount = '1000',
      ...fields
    }: Record<string, unknown> & { card?: string; amount?: string } = {},
  ) {
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
      ...fields,
    });
    assert.equal(payment.status, 200, payment.raw);
    return payment.body.data;
  }

  async function refund(merchant: TestMerchant, body: Record<string, unknown>) {
    const response = await merchant.call('POST', '/refunds/create', body);
    assert.equal(response.status, 200, response.raw);
    return response.body.data;
  }

  async function retrieve(merchant: TestMerchant, path: string) {
    const response = await merchant.call('GET', path);
    assert.equal(response.status, 200, response.raw);
    return response.body.data;
  }

  async function refundsOf(merchant: TestMerchant, paymentId: string): Promise<Array<Record<string, any>>> {
    return (await retrieve(merchant, `/refunds?paymentId=${paymentId}&limit=100`)).data;
  }

  async function eventsOf(merchant: TestMerchant, objectId: string): Promise<Array<Record<string, any>>> {
    return ((await retrieve(merchant, `/events?objectId=${objectId}&limit=100`)).data as Array<Record<string, any>>)
      .slice()
      .reverse();
  }

  /** What the payment shows of its refunds: [displayStatus, amountReceived, amountRefunded]. */
  async function refundState(merchant: TestMerchant, paymentId: string): Promise<[string, string, string]> {
    const payment = await retrieve(merchant, `/payment/${paymentId}`);
    return [payment.displayStatus, payment.amountReceived, payment.amountRefunded];
  }

  /** Moves past the sandbox's follow-up delay and runs the settlement jobs. */
  async function settle() {
    ctx.clock.advance(followUpDelayMs);
    await ctx.runJobs();
  }

  test('a full refund is pending, then succeeded when the processor settles it, with an event for each', async () => {
    const merchant = await ctx.merchant();
    const payment = await paid(merchant, { amount: '1999' });

    const created = await refund(merchant, { paymentId: payment.id });
    assert.match(created.id, /^re_\d{19}$/);
    assert.equal(created.amount, '1999');
    assert.equal(created.currency, 'USD');
    assert.equal(created.paymentId, payment.id);
    assert.equal(created.status, 'pending');
    assert.equal(created.failureReason, null);
    assert.equal(created.reason, null);
    assert.equal(created.metadata, null);
    assert.equal(created.created, ctx.clock.now().toISOString());
    assert.deepEqual(await retrieve(merchant, `/refunds/${created.id}`), created);
    assert.deepEqual(await refundState(merchant, payment.id), ['refund_pending', '1999', '0']);

    await settle();
    assert.deepEqual(await refundState(merchant, payment.id), ['refunded', '1999', '1999']);
    const settled = await retrieve(merchant, `/refunds/${created.id}`);
    assert.deepEqual(settled, { ...created, status: 'succeeded' });
    const events = await eventsOf(merchant, created.id);
    assert.deepEqual(
      events.map((event) => event.type),
      ['refund.pending', 'refund.succeeded'],
    );
    // docs/api.md#refunds: refund events carry the Refund, as it was, with its paymentId.
    assert.deepEqual(events[0]!.data, created);
    assert.deepEqual(events[1]!.data, settled);

    const again = await merchant.call('POST', '/refunds/create', { paymentId: payment.id });
    assertRefused(again, 'amount_too_large', 'amount');
    assert.equal(again.body.data.amountRefundable, '0');
    assert.match(again.body.msg, /Nothing is left to refund/);
  });

  test('several partial refunds up to the amount received; the default amount is what is left', async () => {
    const merchant = await ctx.merchant();
    const payment = await paid(merchant, { amount: '1000' });

    assert.equal((await refund(merchant, { paymentId: payment.id, amount: '300' })).amount, '300');
    ctx.clock.advance(1);
    assert.equal((await refund(merchant, { paymentId: payment.id, amount: 200 })).amount, '200');
    const tooLarge = await merchant.call('POST', '/refunds/create', { paymentId: payment.id, amount: '501' });
    assertRefused(tooLarge, 'amount_too_large', 'amount');
    assert.equal(tooLarge.body.data.amountRefundable, '500');
    assert.match(tooLarge.body.msg, /amount 501 is more than is left to refund on the payment: 500/);
    assert.deepEqual(await refundState(merchant, payment.id), ['refund_pending', '1000', '0']);

    // Both settle: what is left counts succeeded refunds as it counted pending ones.
    await settle();
    assert.deepEqual(await refundState(merchant, payment.id), ['partially_refunded', '1000', '500']);
    const rest = await refund(merchant, { paymentId: payment.id });
    assert.equal(rest.amount, '500');
    assert.deepEqual(await refundState(merchant, payment.id), ['refund_pending', '1000', '500']);
    assertRefused(
      await merchant.call('POST', '/refunds/create', { paymentId: payment.id, amount: 1 }),
      'amount_too_large',
      'amount',
    );
    await settle();
    assert.deepEqual(await refundState(merchant, payment.id), ['refunded', '1000', '1000']);
    const refunds = await refundsOf(merchant, payment.id);
    assert.deepEqual(
      refunds.map((each) => [each.amount, each.status]),
      [
        ['500', 'succeeded'],
        ['200', 'succeeded'],
        ['300', 'succeeded'],
      ],
    );
  });

  test('20 refunds of one payment at once never exceed what it received; the rest get amount_too_large', async () => {
    const merchant = await ctx.merchant();
    const payment = await paid(merchant, { amount: '1000' });
    const responses = await Promise.all(
      Array.from({ length: 20 }, () =>
        merchant.call('POST', '/refunds/create', { paymentId: payment.id, amount: '150' }),
      ),
    );
    const accepted = responses.filter((response) => response.status === 200);
    const refused = responses.filter((response) => response.status !== 200);
    for (const response of refused) assertRefused(response, 'amount_too_large', 'amount');
    const total = accepted.reduce((sum, response) => sum + BigInt(response.body.data.amount), 0n);
    assert.ok(total <= 1000n, `refunded ${total} of 1000`);
    // 6 × 150 fit in 1000; a seventh does not.
    assert.equal(accepted.length, 6);
    const stored = await refundsOf(merchant, payment.id);
    assert.deepEqual(stored.map((each) => each.id).sort(), accepted.map((response) => response.body.data.id).sort());

    // With the default amount ("everything that is left"), exactly one of 20 gets the 100 left.
    const rest = await Promise.all(
      Array.from({ length: 20 }, () => merchant.call('POST', '/refunds/create', { paymentId: payment.id })),
    );
    const restAccepted = rest.filter((response) => response.status === 200);
    assert.equal(restAccepted.length, 1, rest.map((response) => response.raw).join('\n'));
    assert.equal(restAccepted[0]!.body.data.amount, '100');
    for (const response of rest.filter((each) => each.status !== 200)) {
      assertRefused(response, 'amount_too_large', 'amount');
      assert.equal(response.body.data.amountRefundable, '0');
    }
    await settle();
    assert.deepEqual(await refundState(merchant, payment.id), ['refunded', '1000', '1000']);
  });

  test('refuses an unknown payment, and another merchant’s, with 404 naming paymentId', async () => {
    const merchant = await ctx.merchant();
    const other = await ctx.merchant();
    const payment = await paid(other);
    assertRefused(
      await merchant.call('POST', '/refunds/create', { paymentId: 'pt_1000000000000000000' }),
      'resource_missing',
      'paymentId',
      404,
    );
    assertRefused(
      await merchant.call('POST', '/refunds/create', { paymentId: payment.id }),
      'resource_missing',
      'paymentId',
      404,
    );
    assert.deepEqual(await refundsOf(other, payment.id), []);
  });

  test('refuses payments without money received with invalid_state naming the status', async () => {
    const merchant = await ctx.merchant();
    const method = async (card: string) =>
      (
        await merchant.call('POST', '/payment_methods/create', {
          type: 'card',
          card: { cardNo: card, expMonth: '12', expYear: '2030', securityCode: '123' },
        })
      ).body.data.id;
    const failed = await paid(merchant, { card: cards.declined });
    const processing = await paid(merchant, { card: cards.settlesLater });
    const uncaptured = await paid(merchant, { preAuth: 'y' });
    const unconfirmed = (
      await merchant.call('POST', '/payment/create', {
        amount: '1000',
        currency: 'USD',
        paymentMethod: await method(cards.visa),
      })
    ).body.data;
    const canceled = (
      await merchant.call('POST', '/payment/create', {
        amount: '1000',
        currency: 'USD',
        paymentMethod: await method(cards.visa),
      })
    ).body.data;
    assert.equal((await merchant.call('POST', `/payment/${canceled.id}/cancel`, {})).body.data.status, 'canceled');

    for (const [payment, status] of [
      [failed, 'failed'],
      [processing, 'processing'],
      [uncaptured, 'requires_capture'],
      [unconfirmed, 'requires_confirmation'],
      [canceled, 'canceled'],
    ] as const) {
      const response = await merchant.call('POST', '/refunds/create', { paymentId: payment.id, amount: '100' });
      assertRefused(response, 'invalid_state', 'paymentId');
      assert.equal(response.body.data.status, status);
      assert.match(response.body.msg, new RegExp(`status is ${status}; it must be succeeded`));
      assert.deepEqual(await refundsOf(merchant, payment.id), []);
    }

    // A captured pre-authorization has received its money and can be refunded.
    const captured = await merchant.call('POST', `/payment/${uncaptured.id}/capture`, {});
    assert.equal(captured.body.data.status, 'succeeded', captured.raw);
    assert.equal((await refund(merchant, { paymentId: uncaptured.id })).amount, '1000');
  });

  const badAmounts: Array<[string, unknown]> = [
    ['zero', '0'],
    ['zero as a number', 0],
    ['negative', -5],
    ['negative text', '-5'],
    ['a decimal', 1.5],
    ['decimal text', '1.50'],
    ['13 digits', '1234567890123'],
    ['a boolean', true],
    ['an object', { value: 5 }],
    ['text that is not a number', 'ten'],
  ];
  for (const [what, amount] of badAmounts) {
    test(`refuses an amount that is ${what} with 400 naming amount, writing nothing`, async () => {
      const merchant = await ctx.merchant();
      const payment = await paid(merchant);
      const response = await merchant.call('POST', '/refunds/create', { paymentId: payment.id, amount });
      assertRefused(response, 'invalid_request', 'amount');
      assert.match(response.body.msg, /^amount /);
      assert.deepEqual(await refundsOf(merchant, payment.id), []);
      assert.equal((await eventsOf(merchant, payment.id)).length, 1);
    });
  }

  test('refuses bad fields with 400 naming them: reason other without a note, unknown reason, unknown field, wrong currency', async () => {
    const merchant = await ctx.merchant();
    const payment = await paid(merchant);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ reason: 'other' }, 'note'],
      [{ reason: 'other', note: '  ' }, 'note'],
      [{ reason: 'changed_mind' }, 'reason'],
      [{ amout: '100' }, 'amout'],
      [{ currency: 'EUR' }, 'currency'],
      [{ currency: 'dollars' }, 'currency'],
      [{ note: 5 }, 'note'],
      [{ description: true }, 'description'],
      [{ metadata: 'order 5' }, 'metadata'],
      [{ metadata: { orderId: 5 } }, 'metadata.orderId'],
      [{ metadata: { ['k'.repeat(41)]: 'v' } }, 'metadata'],
    ];
    for (const [fields, param] of cases) {
      const response = await merchant.call('POST', '/refunds/create', { paymentId: payment.id, ...fields });
      assertRefused(response, 'invalid_request', param);
      assert.ok(response.body.msg.startsWith(param), response.raw);
    }
    assertRefused(await merchant.call('POST', '/refunds/create', { amount: '100' }), 'invalid_request', 'paymentId');
    assert.deepEqual(await refundsOf(merchant, payment.id), []);
  });

  test('takes reason, note, description and metadata, echoed; "" means an absent amount or reason', async () => {
    const merchant = await ctx.merchant();
    const payment = await paid(merchant, { amount: '1000' });
    const first = await refund(merchant, {
      paymentId: payment.id,
      amount: '100',
      currency: 'usd',
      reason: 'other',
      note: 'Returned in store',
      description: 'Café order #5',
      metadata: { orderId: '6735', channel: 'pos' },
    });
    assert.equal(first.reason, 'other');
    assert.equal(first.note, 'Returned in store');
    assert.equal(first.description, 'Café order #5');
    assert.deepEqual(first.metadata, { orderId: '6735', channel: 'pos' });
    assert.equal(first.currency, 'USD');

    // docs/api.md#compatibility-with-existing-clients: a description sent as a number or false is kept as the text it stands for.
    const numbered = await refund(merchant, {
      paymentId: payment.id,
      amount: 100,
      description: 42,
      reason: 'duplicate',
    });
    assert.equal(numbered.description, '42');
    const unset = await refund(merchant, { paymentId: payment.id, amount: '100', description: false, reason: '' });
    assert.equal(unset.description, '');
    assert.equal(unset.reason, null);
    const rest = await refund(merchant, { paymentId: payment.id, amount: '', reason: 'fraudulent', note: null });
    assert.equal(rest.amount, '700');
    assert.equal(rest.note, null);
    assert.deepEqual(await retrieve(merchant, `/refunds/${first.id}`), first);
  });

  test('4000000000005126: the refund is pending, then failed with card_closed; the amount can be refunded again', async () => {
    const merchant = await ctx.merchant();
    const payment = await paid(merchant, { card: cards.refundFails, amount: '800' });
    assert.equal(payment.status, 'succeeded');
    const created = await refund(merchant, { paymentId: payment.id, amount: '500' });
    assert.equal(created.status, 'pending');
    assertRefused(
      await merchant.call('POST', '/refunds/create', { paymentId: payment.id, amount: '301' }),
      'amount_too_large',
      'amount',
    );

    await settle();
    const failed = await retrieve(merchant, `/refunds/${created.id}`);
    assert.equal(failed.status, 'failed');
    assert.equal(failed.failureReason, 'card_closed');
    const events = await eventsOf(merchant, created.id);
    assert.deepEqual(
      events.map((event) => [event.type, event.data.status, event.data.failureReason]),
      [
        ['refund.pending', 'pending', null],
        ['refund.failed', 'failed', 'card_closed'],
      ],
    );
    // A failed refund gives its amount back to what may be refunded.
    assert.deepEqual(await refundState(merchant, payment.id), ['succeeded', '800', '0']);
    assert.equal((await refund(merchant, { paymentId: payment.id })).amount, '800');
  });

  test('4000000000007726: the refund succeeds at once, with its pending and succeeded events', async () => {
    const merchant = await ctx.merchant();
    const payment = await paid(merchant, { card: cards.refundSucceedsAtOnce, amount: '800' });
    const created = await refund(merchant, { paymentId: payment.id, amount: '300' });
    assert.equal(created.status, 'succeeded');
    // Both events are written at the same instant of the test clock: their order in the list is not fixed.
    assert.deepEqual((await eventsOf(merchant, created.id)).map((event) => [event.type, event.data.status]).sort(), [
      ['refund.pending', 'pending'],
      ['refund.succeeded', 'succeeded'],
    ]);
    assert.deepEqual(await refundState(merchant, payment.id), ['partially_refunded', '800', '300']);
    assert.equal((await refund(merchant, { paymentId: payment.id })).amount, '500');
    assert.deepEqual(await refundState(merchant, payment.id), ['refunded', '800', '800']);
  });

  test('a reversal keeps the refunds: amountReceived drops to what they cover, and pending ones still settle', async () => {
    const merchant = await ctx.merchant();
    const start = ctx.clock.now();
    // The sandbox reverses this payment, and settles each refund, one follow-up delay after it was made.
    const payment = await paid(merchant, { card: cards.reversedLater, amount: '1000' });
    ctx.clock.advance(1);
    const first = await refund(merchant, { paymentId: payment.id, amount: '300' });
    ctx.clock.advance(1);
    const second = await refund(merchant, { paymentId: payment.id, amount: '200' });

    ctx.clock.set(new Date(start.getTime() + followUpDelayMs));
    await ctx.runJobs();
    const reversed = await retrieve(merchant, `/payment/${payment.id}`);
    assert.equal(reversed.status, 'failed');
    assert.equal(reversed.errorCode, 'payment_reversed');
    assert.deepEqual(await refundState(merchant, payment.id), ['failed', '500', '0']);
    const refused = await merchant.call('POST', '/refunds/create', { paymentId: payment.id, amount: '1' });
    assertRefused(refused, 'invalid_state', 'paymentId');
    assert.equal(refused.body.data.status, 'failed');

    ctx.clock.advance(2);
    await ctx.runJobs();
    for (const each of [first, second]) {
      assert.equal((await retrieve(merchant, `/refunds/${each.id}`)).status, 'succeeded');
    }
    assert.deepEqual(await refundState(merchant, payment.id), ['failed', '500', '500']);
    assert.deepEqual(
      (await eventsOf(merchant, payment.id)).map((event) => [event.type, event.data.amountReceived]),
      [
        ['payment.succeeded', '1000'],
        ['payment.failed', '500'],
      ],
    );
  });

  test('lists refunds newest first, filtered by payment, status and creation time, page by page', async () => {
    const merchant = await ctx.merchant();
    const first = await paid(merchant, { amount: '1000' });
    const second = await paid(merchant, { card: cards.refundFails, amount: '1000' });
    const start = ctx.clock.now();
    const made: Array<Record<string, any>> = [];
    for (const payment of [first, second, first, second, first]) {
      made.push(await refund(merchant, { paymentId: payment.id, amount: '100' }));
      ctx.clock.advance(1000);
    }
    await settle();
    const newestFirst = made.map((each) => each.id).reverse();

    const all = await retrieve(merchant, '/refunds?limit=100');
    assert.deepEqual(
      all.data.map((each: { id: string }) => each.id),
      newestFirst,
    );
    assert.equal(all.hasMore, false);
    assert.deepEqual(
      (await refundsOf(merchant, first.id)).map((each) => each.id),
      [made[4]!.id, made[2]!.id, made[0]!.id],
    );
    const failed = await retrieve(merchant, '/refunds?status=failed');
    assert.deepEqual(
      failed.data.map((each: { id: string; status: string }) => [each.id, each.status]),
      [
        [made[3]!.id, 'failed'],
        [made[1]!.id, 'failed'],
      ],
    );
    const bound = (offset: number) => encodeURIComponent(new Date(start.getTime() + offset).toISOString());
    const window = await retrieve(merchant, `/refunds?created[gte]=${bound(1000)}&created[lt]=${bound(3000)}`);
    assert.deepEqual(
      window.data.map((each: { id: string }) => each.id),
      [made[2]!.id, made[1]!.id],
    );
    const after = await retrieve(merchant, `/refunds?created[gt]=${bound(3000)}&created[lte]=${bound(4000)}`);
    assert.deepEqual(
      after.data.map((each: { id: string }) => each.id),
      [made[4]!.id],
    );

    const page1 = await retrieve(merchant, '/refunds?limit=2');
    assert.deepEqual(
      page1.data.map((each: { id: string }) => each.id),
      newestFirst.slice(0, 2),
    );
    assert.equal(page1.hasMore, true);
    const page2 = await retrieve(merchant, `/refunds?limit=2&startingAfter=${newestFirst[1]}`);
    assert.deepEqual(
      page2.data.map((each: { id: string }) => each.id),
      newestFirst.slice(2, 4),
    );
    const back = await retrieve(merchant, `/refunds?limit=2&endingBefore=${newestFirst[2]}`);
    assert.deepEqual(
      back.data.map((each: { id: string }) => each.id),
      newestFirst.slice(0, 2),
    );
    assert.equal((await retrieve(merchant, '/refunds?status=')).data.length, 5);
    assertRefused(await merchant.call('GET', '/refunds?status=done'), 'invalid_request', 'status');
    assertRefused(await merchant.call('GET', '/refunds?created[gt]=yesterday'), 'invalid_request', 'created[gt]');
  });

  test('another merchant’s refund is answered as missing (404) and never listed', async () => {
    const owner = await ctx.merchant();
    const stranger = await ctx.merchant();
    const created = await refund(owner, { paymentId: (await paid(owner)).id });
    assertRefused(await stranger.call('GET', `/refunds/${created.id}`), 'resource_missing', 'id', 404);
    assert.deepEqual((await retrieve(stranger, '/refunds')).data, []);
    assert.deepEqual((await retrieve(stranger, `/refunds?paymentId=${created.paymentId}`)).data, []);
    assertRefused(await owner.call('GET', '/refunds/re_1000000000000000000'), 'resource_missing', 'id', 404);
  });

  test('replays a refund for the same Idempotency-Key: one refund', async () => {
    const merchant = await ctx.merchant();
    const payment = await paid(merchant);
    const headers = { 'idempotency-key': 'refund-once' };
    const first = await merchant.call('POST', '/refunds/create', { paymentId: payment.id, amount: '400' }, headers);
    const second = await merchant.call('POST', '/refunds/create', { paymentId: payment.id, amount: '400' }, headers);
    assert.equal(first.status, 200, first.raw);
    assert.equal(second.raw, first.raw);
    assert.equal((await refundsOf(merchant, payment.id)).length, 1);
  });

  test('refund events reach the endpoints and the payment’s notifyUrl in both kinds, signed as docs/webhooks.md#what-is-sent', async () => {
    const merchant = await ctx.merchant();
    await legacyOnDynamicEndpoint(merchant);
    const hook = await startReceiver();
    const notify = await startReceiver();
    try {
      const endpoint = (
        await merchant.call('POST', '/webhook_endpoints/create', { url: hook.url(), legacyNotifications: true })
      ).body.data;
      const payment = await paid(merchant, { notifyUrl: notify.url('/notify') });
      await ctx.tessera.webhookDispatcher.runOnce();
      const before = { hook: hook.requests.length, notify: notify.requests.length };

      const created = await refund(merchant, { paymentId: payment.id, amount: '250' });
      await settle();
      await ctx.tessera.webhookDispatcher.runOnce();
      const legacyKey = await ctx.tessera.webhookEndpoints.legacyKeyFor(merchant.id);
      const endpoints = (await retrieve(merchant, '/webhook_endpoints?limit=100')).data as Array<Record<string, any>>;
      const dynamic = endpoints.find((each) => each.kind === 'dynamic');
      assert.ok(dynamic);
      const dynamicToken = (await merchant.call('POST', `/webhook_endpoints/${dynamic.id}/reveal_token`, {})).body.data
        .token;

      for (const [receiver, token, count] of [
        [hook, endpoint.token, before.hook],
        [notify, dynamicToken, before.notify],
      ] as const) {
        const requests = receiver.requests.slice(count);
        const types = requests.map((request) => JSON.parse(request.body).type).sort();
        assert.deepEqual(types, [
          'endpoint_refund.refund_pending',
          'endpoint_refund.refund_succeeded',
          'refund.pending',
          'refund.succeeded',
        ]);
        for (const request of requests) {
          const body = JSON.parse(request.body);
          assert.equal(body.data.id, created.id);
          assert.equal(body.data.paymentId, payment.id);
          assert.equal(body.data.amount, '250');
          // The Refund and nothing else: the notifyUrl it went to is not part of it.
          assert.deepEqual(Object.keys(body.data).sort(), Object.keys(created).sort());
          const endpointKind = body.type.startsWith('endpoint_');
          assert.equal(signedWith(receiver, request, token), endpointKind, body.type);
          assert.equal(signedWith(receiver, request, legacyKey), !endpointKind, body.type);
        }
      }
      assert.ok(notify.requests.slice(before.notify).every((request) => request.path === '/notify'));

      // A resend to the dynamic endpoint finds the payment's notifyUrl again.
      const pendingEvent = (await eventsOf(merchant, created.id))[0]!;
      const resent = await merchant.call('POST', `/events/${pendingEvent.id}/resend`, { endpointId: dynamic.id });
      assert.equal(resent.status, 200, resent.raw);
      assert.ok(resent.body.data.data.every((delivery: { url: string }) => delivery.url === notify.url('/notify')));
      const resentAll = await merchant.call('POST', `/events/${pendingEvent.id}/resend`, {});
      assert.deepEqual(
        resentAll.body.data.data.map((delivery: { url: string }) => delivery.url).sort(),
        [hook.url(), hook.url(), notify.url('/notify'), notify.url('/notify')].sort(),
      );
    } finally {
      await ctx.tessera.webhookDispatcher.stop();
      await Promise.all([hook.close(), notify.close()]);
    }
  });
});

describe(`refunds when the processor cannot be reached (${databaseKind})`, () => {
  let ctx: TestContext;
  let refundsRefused = 0;
  before(async () => {
    const sandbox = createSandboxProcessor({ followUpDelayMs });
    // The sandbox, with refunds failing as an outage would (an exception) while refundsRefused > 0.
    const processor: Processor = {
      ...sandbox,
      refund: async (...args) => {
        if (refundsRefused > 0) {
          refundsRefused--;
          throw new Error('processor unreachable');
        }
        return sandbox.refund(...args);
      },
    };
    ctx = await startTestApp({ followUpDelayMs, processor });
  });
  after(() => ctx.close());

  test('a refund the processor could not take stays pending and is submitted again by the resume job', async () => {
    const merchant = await ctx.merchant();
    const method = await merchant.call('POST', '/payment_methods/create', {
      type: 'card',
      card: { cardNo: cards.refundSucceedsAtOnce, expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    const payment = await merchant.call('POST', '/payment/create', {
      amount: '900',
      currency: 'USD',
      paymentMethod: method.body.data.id,
      confirm: true,
    });
    refundsRefused = 2;
    const created = await merchant.call('POST', '/refunds/create', { paymentId: payment.body.data.id });
    assert.equal(created.status, 200, created.raw);
    assert.equal(created.body.data.status, 'pending');
    assertRefused(
      await merchant.call('POST', '/refunds/create', { paymentId: payment.body.data.id }),
      'amount_too_large',
      'amount',
    );

    // Five minutes on, the resume job asks again; the processor is still down, so it is retried.
    ctx.clock.advance(5 * 60 * 1000);
    await ctx.runJobs();
    const stillPending = await merchant.call('GET', `/refunds/${created.body.data.id}`);
    assert.equal(stillPending.body.data.status, 'pending');
    ctx.clock.advance(60 * 1000);
    await ctx.runJobs();
    const settled = await merchant.call('GET', `/refunds/${created.body.data.id}`);
    assert.equal(settled.body.data.status, 'succeeded');
    assert.equal(refundsRefused, 0);
  });
});
