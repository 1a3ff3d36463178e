import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';
import { signedInOwner, type DashboardClient } from './helpers/dashboard.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';
import { verifyWebhook } from '../sdk/verify-webhook.js';

describe('dashboard: webhook endpoint settings, the go-live check and events (issues 10, 11, 12)', () => {
  let ctx: TestContext;
  let merchant: TestMerchant;
  let owner: DashboardClient;
  let receiver: Receiver;
  let token = '';
  const base = '/dashboard/developers';

  before(async () => {
    ctx = await startTestApp();
    merchant = await ctx.merchant({ name: 'Developers shop' });
    owner = await signedInOwner(ctx, merchant.id, 'owner@developers.test', 'correct horse battery');
    // A receiver that verifies as the SDK does (with the test's clock), answering success only then.
    receiver = await startReceiver((request) => {
      try {
        verifyWebhook({ headers: request.headers, rawBody: request.rawBody, token, now: ctx.clock.now() });
        return { status: 200, body: 'success' };
      } catch {
        return { status: 401, body: 'bad signature' };
      }
    });
  });
  after(async () => {
    await receiver?.close();
    await ctx?.close();
  });

  const endpoints = async () =>
    (await merchant.call('GET', '/webhook_endpoints?limit=100')).body.data.data as Array<Record<string, unknown>>;

  it('creates an endpoint with the lower-case signature setting and changes it back on the edit form', async () => {
    const created = await owner.post(`${base}/webhooks`, {
      url: receiver.url('/lower'),
      description: 'Java receiver',
      enabledEvents: '*',
      signatureCase: 'lower',
    });
    assert.equal(created.status, 303, created.body);
    const id = created.location!.split('/').pop()!;
    assert.equal((await endpoints()).find((endpoint) => endpoint.id === id)?.signatureCase, 'lower');
    const detail = await owner.get(`${base}/webhooks/${id}`);
    assert.match(detail.body, /<option value="lower" selected>/);
    const saved = await owner.post(`${base}/webhooks/${id}`, {
      url: receiver.url('/lower'),
      description: 'Java receiver',
      enabledEvents: '*',
      status: 'enabled',
      legacyNotifications: 'off',
      signatureCase: 'upper',
    });
    assert.equal(saved.status, 200, saved.body);
    const after = (await endpoints()).find((endpoint) => endpoint.id === id);
    assert.equal(after?.signatureCase, 'upper');
    assert.equal(after?.legacyNotifications, false);
  });

  it('keeps what was typed and names the field when the signature setting is not one of its values', async () => {
    const answer = await owner.post(`${base}/webhooks`, {
      url: receiver.url('/typed'),
      description: 'Typed description',
      signatureCase: 'mixed',
    });
    assert.equal(answer.status, 400);
    assert.match(answer.body, /id="f-signatureCase-error"/);
    assert.match(answer.body, /value="Typed description"/);
  });

  it('shows the dynamic notifyUrl endpoint with its own form: legacy switch, letter case and status, never a URL', async () => {
    const list = await owner.get(`${base}/webhooks`);
    assert.match(list.body, /notifyUrl \(dynamic\)/);
    const dynamic = (await endpoints()).find((endpoint) => endpoint.kind === 'dynamic')!;
    const detail = await owner.get(`${base}/webhooks/${dynamic.id}`);
    assert.equal(detail.status, 200);
    assert.match(detail.body, /name="signatureCase"/);
    assert.match(detail.body, /name="legacyNotifications"/);
    const settings = detail.body.slice(detail.body.indexOf('<h2>Settings</h2>'));
    assert.doesNotMatch(settings.slice(0, settings.indexOf('</form>')), /name="(url|enabledEvents)"/);
    assert.doesNotMatch(detail.body, /Delete endpoint/);
    const saved = await owner.post(`${base}/webhooks/${dynamic.id}`, {
      status: 'disabled',
      legacyNotifications: 'off',
      signatureCase: 'lower',
    });
    assert.equal(saved.status, 200, saved.body);
    const after = (await endpoints()).find((endpoint) => endpoint.id === dynamic.id)!;
    assert.deepEqual([after.status, after.legacyNotifications, after.signatureCase], ['disabled', false, 'lower']);
    // A URL sent anyway is refused by the endpoint service, not silently taken.
    const forged = await owner.post(`${base}/webhooks/${dynamic.id}`, {
      url: 'https://example.com/hook',
      status: 'enabled',
      legacyNotifications: 'off',
      signatureCase: 'lower',
    });
    assert.equal(forged.status, 400);
    assert.match(forged.body, /url cannot be set on the dynamic endpoint/);
    await owner.post(`${base}/webhooks/${dynamic.id}`, { status: 'enabled', legacyNotifications: 'on' });
  });

  it('runs the go-live check from the endpoint page and shows each verdict and the stored history', async () => {
    const created = await merchant.call('POST', '/webhook_endpoints/create', { url: receiver.url('/check') });
    const id = created.body.data.id as string;
    token = created.body.data.token as string;
    const page = await owner.get(`${base}/webhooks/${id}`);
    assert.match(page.body, /Run go-live check/);
    assert.match(page.body, /No check run yet/);
    const answer = await owner.post(`${base}/webhooks/${id}/check`);
    assert.equal(answer.status, 200, answer.body);
    assert.match(answer.body, /Ready to go live: every case passed/);
    for (const name of ['valid', 'duplicate', 'bad signature', 'stale request time', 'changed body', 'legacy kind'])
      assert.match(
        answer.body,
        new RegExp(`<td[^>]*>${name}</td>\\s*<td[^>]*><span class="badge badge-good">Passed</span></td>`),
      );
    assert.doesNotMatch(answer.body, new RegExp(token));
    // A receiver that acknowledges everything fails the forged cases.
    receiver.respond(() => ({ status: 200, body: 'success' }));
    const careless = await owner.post(`${base}/webhooks/${id}/check`);
    assert.match(careless.body, /Not ready: 5 of 8 cases failed/);
    assert.match(
      careless.body,
      /<td[^>]*>bad signature<\/td>\s*<td[^>]*><span class="badge badge-bad">Failed<\/span><\/td>/,
    );
    const later = await owner.get(`${base}/webhooks/${id}`);
    assert.equal((later.body.match(/<details class="card">/g) ?? []).length, 2);
    const audited = await ctx.tessera.db.query<{ action: string }>(
      "SELECT action FROM audit_log WHERE object_id = $1 AND action LIKE 'webhook_endpoint.checked%' ORDER BY created_at, id",
      [id],
    );
    assert.deepEqual(
      audited.map((row) => row.action),
      ['webhook_endpoint.checked:passed', 'webhook_endpoint.checked:failed'],
    );
  });

  it('asks for the notifyUrl to check the dynamic endpoint, beside the field, and checks the one given', async () => {
    const dynamic = (await endpoints()).find((endpoint) => endpoint.kind === 'dynamic')!;
    const missing = await owner.post(`${base}/webhooks/${dynamic.id}/check`, { url: '' });
    assert.equal(missing.status, 400);
    assert.match(missing.body, /id="f-url-error"[^>]*>url is required to check the dynamic endpoint/);
    const bad = await owner.post(`${base}/webhooks/${dynamic.id}/check`, { url: 'not a url' });
    assert.equal(bad.status, 400);
    assert.match(bad.body, /value="not a url"/);
    const before = receiver.requests.length;
    const checked = await owner.post(`${base}/webhooks/${dynamic.id}/check`, { url: receiver.url('/notify') });
    assert.equal(checked.status, 200, checked.body);
    assert.match(checked.body, /cases failed|every case passed/);
    assert.equal(receiver.requests.length - before, 7);
    assert.ok(receiver.requests.slice(before).every((request) => request.path === '/notify'));
  });

  it('filters events by object id as well as type', async () => {
    const first = await merchant.call('POST', '/customers/create', { email: 'one@developers.test' });
    const second = await merchant.call('POST', '/customers/create', { email: 'two@developers.test' });
    const firstId = first.body.data.id as string;
    const secondId = second.body.data.id as string;
    const answer = await owner.get(`${base}/events?objectId=${firstId}`);
    assert.equal(answer.status, 200);
    assert.match(answer.body, new RegExp(firstId));
    assert.doesNotMatch(answer.body, new RegExp(secondId));
    assert.match(answer.body, new RegExp(`id="f-objectId"[^>]*value="${firstId}"`));
    const none = await owner.get(`${base}/events?objectId=${firstId}&type=payment.succeeded`);
    assert.match(none.body, /No events match these filters/);
    const tooLong = await owner.get(`${base}/events?objectId=${'x'.repeat(80)}`);
    assert.equal(tooLong.status, 400);
    assert.match(tooLong.body, /id="f-objectId-error"/);
  });
});
