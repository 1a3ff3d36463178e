import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { databaseKind, startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';

/** docs/webhooks.md#acknowledgement-and-retries, written out here rather than taken from the code under test. */
const specRetryDelaysSeconds = [30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 28800, 28800];

describe(`webhook delivery fast-forward (${databaseKind})`, () => {
  let ctx: TestContext;
  let merchant: TestMerchant;
  let receiver: Receiver;

  before(async () => {
    ctx = await startTestApp({ env: { TESSERA_WEBHOOK_POLL_INTERVAL_MS: '600000' } });
    merchant = await ctx.merchant();
    receiver = await startReceiver(() => ({ status: 500, body: 'down' }));
  });
  after(async () => {
    await receiver.close();
    await ctx.close();
  });

  async function failingDeliveries(): Promise<Array<{ id: string; kind: string }>> {
    await merchant.call('POST', '/webhook_endpoints/create', {
      url: receiver.url(),
      legacyNotifications: true,
      enabledEvents: ['payment.succeeded'],
    });
    const method = await merchant.call('POST', '/payment_methods/create', {
      type: 'card',
      card: { cardNo: '4242424242424242', expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    await merchant.call('POST', '/payment/create', {
      amount: '500',
      currency: 'USD',
      paymentMethod: method.body.data.id,
      confirm: true,
    });
    await ctx.tessera.webhookDispatcher.runOnce();
    const listed = await merchant.call('GET', '/webhook_deliveries?limit=10');
    return listed.body.data.data;
  }

  test('a fast-forwarded test delivery makes all 13 attempts, each wait divided by the factor, then gives up', async () => {
    const deliveries = await failingDeliveries();
    const target = deliveries.find((row) => row.kind === 'endpoint')!;
    const untouched = deliveries.find((row) => row.kind === 'legacy')!;
    const factor = 36_000;
    const forwarded = await merchant.call('POST', `/webhook_deliveries/${target.id}/fast_forward`, { factor });
    assert.equal(forwarded.status, 200, forwarded.raw);
    assert.equal(forwarded.body.data.status, 'pending');

    for (let step = 0; step < 60; step++) {
      await ctx.tessera.webhookDispatcher.runOnce();
      const current = await merchant.call('GET', `/webhook_deliveries/${target.id}`);
      if (current.body.data.status !== 'pending') break;
      ctx.clock.advance(100);
    }
    const ended = await merchant.call('GET', `/webhook_deliveries/${target.id}`);
    assert.equal(ended.body.data.status, 'failed');
    assert.equal(ended.body.data.attempts, 13);
    const attempts = (await merchant.call('GET', `/webhook_deliveries/${target.id}/attempts`)).body.data.data;
    assert.equal(attempts.length, 13);
    // From the second attempt (made at once on fast-forward), each wait is the schedule's (docs/webhooks.md#acknowledgement-and-retries) divided by the factor.
    for (let index = 2; index < attempts.length; index++) {
      const waited = Date.parse(attempts[index].attemptedAt) - Date.parse(attempts[index - 1].attemptedAt);
      const expected = Math.ceil((specRetryDelaysSeconds[index - 1]! * 1000) / factor);
      assert.ok(waited >= expected && waited < expected + 200, `wait ${index}: ${waited} ms, expected ~${expected}`);
    }
    // The other delivery keeps the schedule (docs/webhooks.md#acknowledgement-and-retries): its 30 s wait has not passed.
    const other = await merchant.call('GET', `/webhook_deliveries/${untouched.id}`);
    assert.equal(other.body.data.attempts, 1);
    assert.equal(other.body.data.status, 'pending');

    const again = await merchant.call('POST', `/webhook_deliveries/${target.id}/fast_forward`);
    assert.equal(again.status, 400);
    assert.equal(again.body.code, 'invalid_state');
  });

  test('a recovered delivery waiting for the one before it keeps waiting when fast-forwarded (its later waits shrink)', async () => {
    const shop = await ctx.merchant();
    const hook = await startReceiver();
    try {
      const created = await shop.call('POST', '/webhook_endpoints/create', {
        url: hook.url(),
        legacyNotifications: false,
        enabledEvents: ['payment.succeeded'],
      });
      const id = created.body.data.id as string;
      const since = ctx.clock.now().toISOString();
      await shop.call('POST', `/webhook_endpoints/${id}/update`, { status: 'disabled' });
      const method = await shop.call('POST', '/payment_methods/create', {
        type: 'card',
        card: { cardNo: '4242424242424242', expMonth: '12', expYear: '2030', securityCode: '123' },
      });
      for (let index = 0; index < 2; index++) {
        ctx.clock.advance(1000);
        await shop.call('POST', '/payment/create', {
          amount: '500',
          currency: 'USD',
          paymentMethod: method.body.data.id,
          confirm: true,
        });
      }
      await shop.call('POST', `/webhook_endpoints/${id}/update`, { status: 'enabled' });
      await shop.call('POST', `/webhook_endpoints/${id}/recover`, { since });
      const listed = await shop.call('GET', `/webhook_deliveries?endpointId=${id}`);
      const [waiting] = (listed.body.data.data as Array<{ id: string; nextAttemptAt: string | null }>).filter(
        (delivery) => delivery.nextAttemptAt === null,
      );
      assert.ok(waiting, listed.raw);

      const forwarded = await shop.call('POST', `/webhook_deliveries/${waiting.id}/fast_forward`, {});
      assert.equal(forwarded.status, 200, forwarded.raw);
      assert.deepEqual([forwarded.body.data.status, forwarded.body.data.nextAttemptAt], ['pending', null]);
      assert.equal(await ctx.tessera.webhookDispatcher.runOnce(), 2);
      assert.equal(hook.maxConcurrent(), 1);
      const sent = hook.requests.map((request) => (JSON.parse(request.body) as { id: string }).id);
      const last = await shop.call('GET', `/webhook_deliveries/${waiting.id}`);
      assert.equal(sent[1], last.body.data.eventId);
    } finally {
      await hook.close();
    }
  });

  test('the factor is bounded, and live mode is refused naming the rule', async () => {
    for (const factor of [0, 86_401, 1.5]) {
      const refused = await merchant.call('POST', '/webhook_deliveries/wd_1000000000000000000/fast_forward', {
        factor,
      });
      assert.equal(refused.status, 400, refused.raw);
      assert.equal(refused.body.data.param, 'factor');
    }
    const missing = await merchant.call('POST', '/webhook_deliveries/wd_1000000000000000000/fast_forward', {});
    assert.equal(missing.status, 404);

    const live = await ctx.merchant({ name: 'Live merchant' });
    await ctx.tessera.db.query(`UPDATE api_keys SET mode = 'live' WHERE merchant_id = $1`, [live.id]);
    const refused = await live.call('POST', '/webhook_deliveries/wd_1000000000000000000/fast_forward', {});
    assert.equal(refused.status, 403, refused.raw);
    assert.equal(refused.body.code, 'permission_denied');
    assert.match(refused.body.msg, /test mode only/);
  });
});
