/**
 * What the webhook delivery test files share (test/webhook-delivery*.test.ts): an independent
 * signature check, and a suite's app with a receiver, endpoint and payment helpers.
 */
import { createHmac } from 'node:crypto';
import { after, afterEach, before } from 'node:test';
import assert from 'node:assert/strict';
import { payWithTestCard, startTestApp, type TestContext, type TestMerchant } from './harness.js';
import { startReceiver, type Receiver, type ReceivedRequest } from './receiver.js';

export const visa = '4242424242424242';
export const timeoutMs = 1000;
export const perTargetCap = 4;
/** docs/webhooks.md#acknowledgement-and-retries, written out here rather than taken from the code under test. */
export const specRetryDelaysSeconds = [30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 28800, 28800];

/** HMAC-SHA256(key, request-time + "." + raw body) as upper-case hex, computed independently. */
export function hmac(key: string, requestTime: string, body: Buffer | string): string {
  return createHmac('sha256', key)
    .update(Buffer.concat([Buffer.from(`${requestTime}.`), Buffer.isBuffer(body) ? body : Buffer.from(body)]))
    .digest('hex')
    .toUpperCase();
}

export function header(request: ReceivedRequest, name: string): string {
  for (let index = 0; index < request.rawHeaders.length; index += 2) {
    if (request.rawHeaders[index] === name) return request.rawHeaders[index + 1] ?? '';
  }
  assert.fail(`no ${name} header (exact case) among ${request.rawHeaders.filter((_, i) => i % 2 === 0).join(', ')}`);
}

/** True when the request's Signature is the independent HMAC of its body with `key`. */
export function signedWith(request: ReceivedRequest, key: string): boolean {
  return header(request, 'Signature') === hmac(key, header(request, 'Request-Time'), request.rawBody);
}

export function typeOf(request: ReceivedRequest): string {
  return (JSON.parse(request.body) as { type: string }).type;
}

/**
 * Registers the hooks of a describe block that delivers through one app: started before its
 * tests, each test's deliveries ended after it. `ctx` is set once the block's first hook ran.
 */
export function deliverySuite() {
  const suite = { ctx: undefined as unknown as TestContext };
  const receivers: Receiver[] = [];

  before(async () => {
    suite.ctx = await startTestApp({
      env: {
        TESSERA_WEBHOOK_TIMEOUT_MS: String(timeoutMs),
        TESSERA_WEBHOOK_CONCURRENCY_PER_TARGET: String(perTargetCap),
        // Long, so that a delivery that arrives at once after a payment was woken, not polled.
        TESSERA_WEBHOOK_POLL_INTERVAL_MS: '600000',
      },
    });
  });
  after(async () => {
    await Promise.all(receivers.map((receiver) => receiver.close()));
    await suite.ctx.close();
  });
  // Each test's deliveries end with it, so that a later test's runs never send them again.
  afterEach(async () => {
    await suite.ctx.tessera.webhookDispatcher.stop();
    await suite.ctx.tessera.db.query(
      "UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, locked_until = NULL WHERE status = 'pending'",
    );
  });

  async function receiver(...args: Parameters<typeof startReceiver>): Promise<Receiver> {
    const started = await startReceiver(...args);
    receivers.push(started);
    return started;
  }

  const run = () => suite.ctx.tessera.webhookDispatcher.runOnce();
  const advanceSeconds = (seconds: number) => suite.ctx.clock.advance(seconds * 1000);

  async function createEndpoint(
    merchant: TestMerchant,
    url: string,
    options: { legacyNotifications?: boolean; enabledEvents?: string[] } = {},
  ): Promise<{ id: string; token: string }> {
    // These tests follow both notification kinds (docs/webhooks.md#what-is-sent); docs/decisions/0014-legacy-opt-in-and-sequence.md makes the legacy one opt-in.
    const response = await merchant.call('POST', '/webhook_endpoints/create', {
      url,
      legacyNotifications: true,
      ...options,
    });
    assert.equal(response.status, 200, response.raw);
    return { id: response.body.data.id, token: response.body.data.token };
  }

  /** A payment that succeeds (test/helpers/harness.ts) and its payment.succeeded event. */
  async function pay(merchant: TestMerchant, fields: Record<string, unknown> = {}) {
    const payment = await payWithTestCard(merchant, fields);
    const events = await merchant.call('GET', `/events?objectId=${payment.id}`);
    const event = events.body.data.data[0];
    assert.equal(event.type, 'payment.succeeded');
    return { payment, event };
  }

  async function deliveriesOf(merchant: TestMerchant, eventId: string) {
    const response = await merchant.call('GET', `/events/${eventId}/deliveries?limit=100`);
    assert.equal(response.status, 200, response.raw);
    return response.body.data.data as Array<Record<string, any>>;
  }

  async function attemptsOf(merchant: TestMerchant, deliveryId: string) {
    const response = await merchant.call('GET', `/webhook_deliveries/${deliveryId}/attempts`);
    assert.equal(response.status, 200, response.raw);
    return response.body.data.data as Array<Record<string, any>>;
  }

  async function dynamicEndpointToken(merchant: TestMerchant): Promise<{ id: string; token: string }> {
    const list = await merchant.call('GET', '/webhook_endpoints?limit=100');
    const dynamic = (list.body.data.data as Array<{ id: string; kind: string }>).find((e) => e.kind === 'dynamic');
    assert.ok(dynamic, list.raw);
    const revealed = await merchant.call('POST', `/webhook_endpoints/${dynamic.id}/reveal_token`, {});
    assert.equal(revealed.status, 200, revealed.raw);
    return { id: dynamic.id, token: revealed.body.data.token };
  }
  return Object.assign(suite, {
    receiver,
    run,
    advanceSeconds,
    createEndpoint,
    pay,
    deliveriesOf,
    attemptsOf,
    dynamicEndpointToken,
  });
}
