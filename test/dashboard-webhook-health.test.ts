import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { databaseKind, startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';
import { signedInOwner, type DashboardClient } from './helpers/dashboard.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';

/*
 * Endpoint health and recover on the dashboard (issue 20): a failing endpoint is never shown as
 * "enabled" in green; home lists the endpoints that need attention and never says "None" while
 * deliveries are retrying; the endpoint page recovers what was missed, audited with the member.
 */
describe(`dashboard: endpoint health and recover (${databaseKind})`, () => {
  let ctx: TestContext;
  let merchant: TestMerchant;
  let owner: DashboardClient;
  let receiver: Receiver;
  let endpointId = '';
  const base = '/dashboard/developers';

  before(async () => {
    ctx = await startTestApp({ env: { TESSERA_WEBHOOK_POLL_INTERVAL_MS: '600000' } });
    merchant = await ctx.merchant({ name: 'Health shop' });
    owner = await signedInOwner(ctx, merchant.id, 'owner@health.test', 'correct horse battery');
    receiver = await startReceiver(() => ({ status: 500, body: 'down' }));
    const created = await merchant.call('POST', '/webhook_endpoints/create', {
      url: receiver.url(),
      enabledEvents: ['payment.succeeded'],
      legacyNotifications: false,
    });
    endpointId = created.body.data.id;
    const method = await merchant.call('POST', '/payment_methods/create', {
      type: 'card',
      card: { cardNo: '4242424242424242', expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    await merchant.call('POST', '/payment/create', {
      amount: '700',
      currency: 'EUR',
      paymentMethod: method.body.data.id,
      confirm: true,
    });
    assert.equal(await ctx.tessera.webhookDispatcher.runOnce(), 1);
  });
  after(async () => {
    await receiver?.close();
    await ctx?.close();
  });

  it('shows a failing endpoint as failing (never enabled in green) in the list and on its page', async () => {
    const list = await owner.get(`${base}/webhooks`);
    assert.equal(list.status, 200);
    const row = list.body.split('<tr>').find((part) => part.includes(endpointId)) ?? '';
    assert.match(row, /<td[^>]*class="status-failed"[^>]*>failing since /);
    assert.doesNotMatch(row, /status-enabled/);
    const detail = await owner.get(`${base}/webhooks/${endpointId}`);
    assert.match(detail.body, /<dd class="status-failed">failing since /);
    assert.match(detail.body, /The endpoint answered HTTP 500, not 2xx/);
    assert.match(detail.body, /<h2 id="recover">Recover missed events<\/h2>/);
  });

  it('home lists the endpoint that needs attention and the delivery being retried', async () => {
    const home = await owner.get('/dashboard');
    assert.equal(home.status, 200);
    assert.match(home.body, /Endpoints that need attention/);
    assert.match(home.body, new RegExp(`href="/dashboard/developers/webhooks/${endpointId}"`));
    assert.match(home.body, /<span class="badge badge-warn">Retrying<\/span>/);
    assert.doesNotMatch(home.body, /none is being retried/);
  });

  it('re-enabling offers recover; recover sends what was missed and is audited with the member', async () => {
    const settings = {
      url: receiver.url(),
      description: '',
      enabledEvents: 'payment.succeeded',
      legacyNotifications: 'off',
      signatureCase: 'upper',
    };
    const disabled = await owner.post(`${base}/webhooks/${endpointId}`, { ...settings, status: 'disabled' });
    assert.equal(disabled.status, 200, disabled.body);
    assert.match(disabled.body, /This endpoint is disabled and receives nothing/);
    const refused = await owner.post(`${base}/webhooks/${endpointId}/recover`, { since: '2026-11-22T00:00:00Z' });
    assert.equal(refused.status, 409);
    assert.match(refused.body, /enable it first/);

    const enabled = await owner.post(`${base}/webhooks/${endpointId}`, { ...settings, status: 'enabled' });
    assert.equal(enabled.status, 200, enabled.body);
    assert.match(enabled.body, /recover the events it missed below/);
    const since = /name="since"\s+type="text"\s+value="([^"]+)"/.exec(enabled.body)?.[1];
    assert.ok(since, 'the form starts where the failures began');

    const future = await owner.post(`${base}/webhooks/${endpointId}/recover`, { since: '2999-01-01T00:00:00Z' });
    assert.equal(future.status, 400);
    assert.match(future.body, /since must not be in the future/);

    receiver.respond(() => ({ status: 200, body: 'success' }));
    const recovered = await owner.post(`${base}/webhooks/${endpointId}/recover`, { since });
    assert.equal(recovered.status, 200, recovered.body);
    assert.match(recovered.body, /1 event\(s\) from .* are being sent again/);
    const before = receiver.requests.length;
    assert.equal(await ctx.tessera.webhookDispatcher.runOnce(), 1);
    assert.equal(receiver.requests.length, before + 1);
    const audit = await ctx.tessera.db.query<{ actor: string }>(
      "SELECT actor FROM audit_log WHERE merchant_id = $1 AND action = 'webhook_endpoint.recovered'",
      [merchant.id],
    );
    assert.equal(audit.length, 1);
    assert.match(audit[0]!.actor, /^member:/);
  });

  it("a recovered delivery waiting for the one before it reads Waiting and why, on the endpoint's log and its event", async () => {
    const since = ctx.clock.now().toISOString();
    await merchant.call('POST', `/webhook_endpoints/${endpointId}/update`, { status: 'disabled' });
    const method = await merchant.call('POST', '/payment_methods/create', {
      type: 'card',
      card: { cardNo: '4242424242424242', expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    for (let index = 0; index < 2; index++) {
      ctx.clock.advance(1000);
      const body = { amount: '700', currency: 'EUR', paymentMethod: method.body.data.id, confirm: true };
      assert.equal((await merchant.call('POST', '/payment/create', body)).status, 200);
    }
    await merchant.call('POST', `/webhook_endpoints/${endpointId}/update`, { status: 'enabled' });
    const recovered = await merchant.call('POST', `/webhook_endpoints/${endpointId}/recover`, { since });
    assert.equal(recovered.body.data.deliveriesCreated, 2, recovered.raw);
    const listed = await merchant.call('GET', `/webhook_deliveries?endpointId=${endpointId}&status=pending`);
    const waiting = (listed.body.data.data as Array<{ eventId: string; nextAttemptAt: string | null }>).find(
      (delivery) => delivery.nextAttemptAt === null,
    );
    assert.ok(waiting, listed.raw);

    const waitingBadge =
      /<span class="badge badge-warn">Waiting<\/span> <span class="hint">recovered in order: sent once the one before it is answered<\/span>/;
    const log = await owner.get(`${base}/webhooks/${endpointId}`);
    assert.match(log.body, waitingBadge);
    const event = await owner.get(`${base}/events/${waiting.eventId}`);
    assert.match(event.body, waitingBadge);
    assert.equal(await ctx.tessera.webhookDispatcher.runOnce(), 2);
  });
});
