import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { verifyWebhook } from '../sdk/verify-webhook.js';
import { databaseKind, startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';
import { startReceiver, type ReceivedRequest, type Receiver } from './helpers/receiver.js';

/*
 * docs/webhooks.md#standard-webhooks-format: Standard Webhooks as a per-endpoint format, verified here with the `standardwebhooks`
 * library (the reference implementation), not only with Tessera's own code: webhook-id is the event
 * id, webhook-timestamp Unix seconds, webhook-signature `v1,` + base64 HMAC-SHA256; the token is the
 * same `whsec_…` in both formats; a roll may keep the old token signing for up to 24 hours.
 */

const visa = '4242424242424242';

describe(`Standard Webhooks format (${databaseKind})`, () => {
  let ctx: TestContext;
  const receivers: Receiver[] = [];

  before(async () => {
    ctx = await startTestApp();
  });
  after(async () => {
    await Promise.all(receivers.map((receiver) => receiver.close()));
    await ctx.close();
  });

  async function receiver(...args: Parameters<typeof startReceiver>): Promise<Receiver> {
    const started = await startReceiver(...args);
    receivers.push(started);
    return started;
  }

  /**
   * The library checks webhook-timestamp against Date.now(); Tessera's time here is the test clock,
   * so the library is asked at that time.
   */
  function atTesseraTime<T>(verify: () => T): T {
    const realNow = Date.now;
    Date.now = () => ctx.clock.now().getTime();
    try {
      return verify();
    } finally {
      Date.now = realNow;
    }
  }

  function verifiesWith(token: string, request: ReceivedRequest): boolean {
    try {
      atTesseraTime(() => new Webhook(token).verify(request.body, request.headers as Record<string, string>));
      return true;
    } catch {
      return false;
    }
  }

  async function createEndpoint(merchant: TestMerchant, body: Record<string, unknown>) {
    const response = await merchant.call('POST', '/webhook_endpoints/create', body);
    assert.equal(response.status, 200, response.raw);
    return response.body.data as { id: string; token: string; format: string };
  }

  async function pay(merchant: TestMerchant): Promise<string> {
    const method = await merchant.call('POST', '/payment_methods/create', {
      type: 'card',
      card: { cardNo: visa, expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    const payment = await merchant.call('POST', '/payment/create', {
      amount: '1999',
      currency: 'USD',
      paymentMethod: method.body.data.id,
      confirm: true,
    });
    assert.equal(payment.status, 200, payment.raw);
    return payment.body.data.id;
  }

  const run = () => ctx.tessera.webhookDispatcher.runOnce();

  test('a standard-format endpoint gets webhook-id, webhook-timestamp and a v1 signature the library verifies', async () => {
    const merchant = await ctx.merchant();
    const hook = await receiver();
    const endpoint = await createEndpoint(merchant, { url: hook.url(), format: 'standard' });
    assert.equal(endpoint.format, 'standard');
    assert.match(endpoint.token, /^whsec_[A-Za-z0-9]{48}$/);
    const paymentId = await pay(merchant);
    await run();
    assert.equal(hook.requests.length, 1, 'the endpoint_ kind only (legacy is opt-in)');
    const request = hook.requests[0]!;
    const body = JSON.parse(request.body) as { id: string; type: string; sequence: number; data: { id: string } };
    assert.equal(body.type, 'endpoint_payment.payment_succeeded');
    assert.equal(body.data.id, paymentId);
    assert.equal(request.headers['webhook-id'], body.id);
    assert.equal(request.headers['webhook-timestamp'], String(Math.floor(ctx.clock.now().getTime() / 1000)));
    assert.match(String(request.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]{43}=$/);
    assert.equal(
      request.headers['signature'],
      undefined,
      'no docs/webhooks.md#what-is-sent headers in the standard format',
    );
    assert.equal(request.headers['request-time'], undefined);

    const verified = atTesseraTime(() =>
      new Webhook(endpoint.token).verify(request.body, request.headers as Record<string, string>),
    ) as { id: string };
    assert.equal(verified.id, body.id);
    // The SDK's verifier tells the format by the headers.
    const bySdk = verifyWebhook({
      headers: request.headers,
      rawBody: request.rawBody,
      token: endpoint.token,
      now: ctx.clock.now(),
    });
    assert.equal(bySdk.id, body.id);
    assert.equal(bySdk.sequence, 1);
    assert.equal(verifiesWith('whsec_' + 'A'.repeat(48), request), false, 'another token does not verify');
  });

  test('a format change keeps the token: the same whsec_ token verifies in either format', async () => {
    const merchant = await ctx.merchant();
    const hook = await receiver();
    const endpoint = await createEndpoint(merchant, { url: hook.url() });
    assert.equal(endpoint.format, 'moneycollect');
    await pay(merchant);
    await run();
    const moneycollect = hook.requests.at(-1)!;
    assert.ok(moneycollect.headers['signature']);
    assert.ok(
      verifyWebhook({
        headers: moneycollect.headers,
        rawBody: moneycollect.rawBody,
        token: endpoint.token,
        now: ctx.clock.now(),
      }),
    );

    const updated = await merchant.call('POST', `/webhook_endpoints/${endpoint.id}/update`, { format: 'standard' });
    assert.equal(updated.status, 200, updated.raw);
    assert.equal(updated.body.data.format, 'standard');
    const revealed = await merchant.call('GET', `/webhook_endpoints/${endpoint.id}/reveal_token`);
    assert.equal(revealed.body.data.token, endpoint.token);
    await pay(merchant);
    await run();
    const standard = hook.requests.at(-1)!;
    assert.ok(standard.headers['webhook-signature']);
    assert.equal(verifiesWith(endpoint.token, standard), true);
    const refused = await merchant.call('POST', `/webhook_endpoints/${endpoint.id}/update`, { format: 'svix' });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.data.param, 'format');
  });

  test('a roll with a grace period sends both signatures until it ends; then only the new token signs', async () => {
    const merchant = await ctx.merchant();
    const hook = await receiver();
    const endpoint = await createEndpoint(merchant, { url: hook.url(), format: 'standard' });
    const rolled = await merchant.call('POST', `/webhook_endpoints/${endpoint.id}/roll_token`, {
      expiresInSeconds: 3600,
    });
    assert.equal(rolled.status, 200, rolled.raw);
    const newToken = rolled.body.data.token as string;
    assert.notEqual(newToken, endpoint.token);
    assert.equal(rolled.body.data.previousTokenExpiresAt, new Date(ctx.clock.now().getTime() + 3600_000).toISOString());

    await pay(merchant);
    await run();
    const during = hook.requests.at(-1)!;
    assert.equal(String(during.headers['webhook-signature']).split(' ').length, 2);
    assert.equal(verifiesWith(endpoint.token, during), true, 'the old token still verifies during the grace period');
    assert.equal(verifiesWith(newToken, during), true, 'the new token verifies at once');

    ctx.clock.advance(3600_000);
    await pay(merchant);
    await run();
    const afterwards = hook.requests.at(-1)!;
    assert.equal(String(afterwards.headers['webhook-signature']).split(' ').length, 1);
    assert.equal(verifiesWith(endpoint.token, afterwards), false, 'the old token has stopped');
    assert.equal(verifiesWith(newToken, afterwards), true);
  });

  test('a grace period is refused for the moneycollect format and beyond 24 hours, naming expiresInSeconds', async () => {
    const merchant = await ctx.merchant();
    const moneycollect = await createEndpoint(merchant, { url: 'http://127.0.0.1:9/hook' });
    const refused = await merchant.call('POST', `/webhook_endpoints/${moneycollect.id}/roll_token`, {
      expiresInSeconds: 60,
    });
    assert.equal(refused.status, 400, refused.raw);
    assert.equal(refused.body.data.param, 'expiresInSeconds');
    assert.match(refused.body.msg, /standard/);
    const revealed = await merchant.call('GET', `/webhook_endpoints/${moneycollect.id}/reveal_token`);
    assert.equal(revealed.body.data.token, moneycollect.token, 'a refused roll changes nothing');

    const standard = await createEndpoint(merchant, { url: 'http://127.0.0.1:9/hook', format: 'standard' });
    for (const expiresInSeconds of [86401, -1, 1.5, 'soon']) {
      const response = await merchant.call('POST', `/webhook_endpoints/${standard.id}/roll_token`, {
        expiresInSeconds,
      });
      assert.equal(response.status, 400, `${expiresInSeconds}: ${response.raw}`);
      assert.equal(response.body.data.param, 'expiresInSeconds');
    }
    const longest = await merchant.call('POST', `/webhook_endpoints/${standard.id}/roll_token`, {
      expiresInSeconds: 86400,
    });
    assert.equal(longest.status, 200, longest.raw);
  });

  test('the go-live check sends standard headers: a receiver using the library passes every case', async () => {
    const merchant = await ctx.merchant();
    let token = '';
    const hook = await receiver((request) => {
      if (!request.headers['webhook-signature']) return { status: 400, body: 'not a standard webhook' };
      return verifiesWith(token, request) ? { status: 200, body: 'success' } : { status: 400, body: 'bad' };
    });
    const endpoint = await createEndpoint(merchant, { url: hook.url(), format: 'standard' });
    token = endpoint.token;
    const check = await merchant.call('POST', `/webhook_endpoints/${endpoint.id}/check`, {});
    assert.equal(check.status, 200, check.raw);
    const failed = (check.body.data.cases as Array<{ name: string; passed: boolean; reason: string }>).filter(
      (item) => !item.passed,
    );
    assert.deepEqual(failed, []);
    assert.equal(check.body.data.passed, true);
  });

  test('the legacy kind, when asked for, is sent as docs/webhooks.md#what-is-sent writes it, whatever the format', async () => {
    const merchant = await ctx.merchant();
    const hook = await receiver();
    await createEndpoint(merchant, { url: hook.url(), format: 'standard', legacyNotifications: true });
    await pay(merchant);
    await run();
    assert.equal(hook.requests.length, 2);
    const legacy = hook.requests.find((request) => !JSON.parse(request.body).type.startsWith('endpoint_'))!;
    assert.ok(legacy.headers['signature'] && legacy.headers['request-time']);
    assert.equal(legacy.headers['webhook-signature'], undefined);
  });
});
