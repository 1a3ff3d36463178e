import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { databaseKind, payWithTestCard, startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';
import { refusingUrl, startReceiver, type Receiver } from './helpers/receiver.js';

const dayMs = 24 * 60 * 60 * 1000;

/*
 * Retention (issue 13, docs/webhooks.md "Retention"): finished deliveries and their attempts go
 * after TESSERA_DELIVERY_RETENTION_DAYS (30 by default), events after TESSERA_EVENT_RETENTION_DAYS
 * (45 here, to tell the two apart), never a pending delivery nor an event that still has one.
 */
describe(`webhook retention (${databaseKind})`, () => {
  let ctx: TestContext;
  let hook: Receiver;
  before(async () => {
    ctx = await startTestApp({
      env: { TESSERA_EVENT_RETENTION_DAYS: '45', TESSERA_WEBHOOK_POLL_INTERVAL_MS: '600000' },
    });
    hook = await startReceiver();
  });
  after(async () => {
    await hook.close();
    await ctx.close();
  });

  const send = () => ctx.tessera.webhookDispatcher.runOnce();

  async function pay(merchant: TestMerchant): Promise<string> {
    const payment = await payWithTestCard(merchant);
    const events = await merchant.call('GET', `/events?objectId=${payment.id}`);
    assert.equal(events.status, 200, events.raw);
    return events.body.data.data[0].id as string;
  }

  async function deliveriesOf(merchant: TestMerchant, eventId: string): Promise<Array<Record<string, any>>> {
    const response = await merchant.call('GET', `/events/${eventId}/deliveries?limit=100`);
    assert.equal(response.status, 200, response.raw);
    return response.body.data.data;
  }

  async function listedIds(merchant: TestMerchant, path: string): Promise<string[]> {
    const response = await merchant.call('GET', `${path}?limit=100`);
    assert.equal(response.status, 200, response.raw);
    return (response.body.data.data as Array<{ id: string }>).map((row) => row.id);
  }

  test('prunes old finished deliveries and old events; keeps recent ones, pending ones and their events', async () => {
    const merchant = await ctx.merchant();
    const delivered = await merchant.call('POST', '/webhook_endpoints/create', {
      url: hook.url(),
      legacyNotifications: true,
    });
    assert.equal(delivered.status, 200, delivered.raw);
    const oldDelivered = await pay(merchant);
    await send();
    const refusing = await merchant.call('POST', '/webhook_endpoints/create', {
      url: await refusingUrl(),
      legacyNotifications: true,
    });
    assert.equal(refusing.status, 200, refusing.raw);
    const oldPending = await pay(merchant);
    await send();
    const oldDeliveries = [
      ...(await deliveriesOf(merchant, oldDelivered)),
      ...(await deliveriesOf(merchant, oldPending)),
    ];
    const finished = oldDeliveries.filter((delivery) => delivery.status === 'succeeded');
    const pending = oldDeliveries.filter((delivery) => delivery.status === 'pending');
    assert.equal(finished.length, 4, JSON.stringify(oldDeliveries));
    assert.equal(pending.length, 2, JSON.stringify(oldDeliveries));

    ctx.clock.advance(31 * dayMs);
    const recent = await pay(merchant);
    await ctx.runJobs();

    for (const delivery of finished) {
      const gone = await merchant.call('GET', `/webhook_deliveries/${delivery.id}`);
      assert.equal(gone.status, 404, gone.raw);
      const attempts = await merchant.call('GET', `/webhook_deliveries/${delivery.id}/attempts`);
      assert.equal(attempts.status, 404, attempts.raw);
    }
    const listed = await listedIds(merchant, '/webhook_deliveries');
    for (const delivery of finished) assert.ok(!listed.includes(delivery.id), delivery.id);
    for (const delivery of pending) {
      const kept = await merchant.call('GET', `/webhook_deliveries/${delivery.id}`);
      assert.equal(kept.status, 200, kept.raw);
      assert.equal(kept.body.data.status, 'pending');
      assert.ok(listed.includes(delivery.id), delivery.id);
    }
    assert.equal((await deliveriesOf(merchant, recent)).length, 4);
    // Events are kept 45 days here: all three still answer.
    for (const id of [oldDelivered, oldPending, recent]) {
      const event = await merchant.call('GET', `/events/${id}`);
      assert.equal(event.status, 200, event.raw);
    }
    assert.deepEqual(await deliveriesOf(merchant, oldDelivered), []);

    ctx.clock.advance(15 * dayMs);
    await ctx.runJobs();

    const oldEvent = await merchant.call('GET', `/events/${oldDelivered}`);
    assert.equal(oldEvent.status, 404, oldEvent.raw);
    const events = await listedIds(merchant, '/events');
    assert.ok(!events.includes(oldDelivered));
    // 46 days old, but a delivery of it is still pending (retrying): kept with it.
    assert.ok(events.includes(oldPending));
    assert.equal((await deliveriesOf(merchant, oldPending)).filter((d) => d.status === 'pending').length, 2);
    // 15 days old: kept, with its deliveries (not yet 30 days old).
    assert.ok(events.includes(recent));
    assert.equal((await deliveriesOf(merchant, recent)).length, 4);
  });
});
