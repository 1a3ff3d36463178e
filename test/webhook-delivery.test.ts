import { createHmac } from 'node:crypto';
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTessera, type Tessera } from '../src/composition/app.js';
import { defaultWebhookRetryDelaysSeconds, loadConfig } from '../src/config.js';
import { canonicalJson } from '../src/events/canonical-json.js';
import { createLogger } from '../src/logger.js';
import { claimDueDeliveries, recordAttemptGroup } from '../src/webhooks/engine/queries.js';
import { leaseMsFor } from '../src/webhooks/engine/claimer.js';
import { createWebhookHttpClient } from '../src/webhooks/http-client.js';
import { formatRequestTime } from '../src/webhooks/signature.js';
import { verifyWebhook, WebhookVerificationError } from '../sdk/verify-webhook.js';
import { databaseKind, startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';
import {
  answerSuccess,
  phpReencode,
  refusingUrl,
  startReceiver,
  type Receiver,
  type ReceivedRequest,
} from './helpers/receiver.js';

const visa = '4242424242424242';
const timeoutMs = 1000;
const perTargetCap = 4;
/** docs/webhooks.md#acknowledgement-and-retries, written out here rather than taken from the code under test. */
const specRetryDelaysSeconds = [30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 28800, 28800];

/** HMAC-SHA256(key, request-time + "." + raw body) as upper-case hex, computed independently. */
function hmac(key: string, requestTime: string, body: Buffer | string): string {
  return createHmac('sha256', key)
    .update(Buffer.concat([Buffer.from(`${requestTime}.`), Buffer.isBuffer(body) ? body : Buffer.from(body)]))
    .digest('hex')
    .toUpperCase();
}

function header(request: ReceivedRequest, name: string): string {
  for (let index = 0; index < request.rawHeaders.length; index += 2) {
    if (request.rawHeaders[index] === name) return request.rawHeaders[index + 1] ?? '';
  }
  assert.fail(`no ${name} header (exact case) among ${request.rawHeaders.filter((_, i) => i % 2 === 0).join(', ')}`);
}

/** True when the request's Signature is the independent HMAC of its body with `key`. */
function signedWith(request: ReceivedRequest, key: string): boolean {
  return header(request, 'Signature') === hmac(key, header(request, 'Request-Time'), request.rawBody);
}

function typeOf(request: ReceivedRequest): string {
  return (JSON.parse(request.body) as { type: string }).type;
}

describe(`webhook delivery (${databaseKind})`, () => {
  let ctx: TestContext;
  const receivers: Receiver[] = [];

  before(async () => {
    ctx = await startTestApp({
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
    await ctx.close();
  });
  // Each test's deliveries end with it, so that a later test's runs never send them again.
  afterEach(async () => {
    await ctx.tessera.webhookDispatcher.stop();
    await ctx.tessera.db.query(
      "UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, locked_until = NULL WHERE status = 'pending'",
    );
  });

  async function receiver(...args: Parameters<typeof startReceiver>): Promise<Receiver> {
    const started = await startReceiver(...args);
    receivers.push(started);
    return started;
  }

  const run = () => ctx.tessera.webhookDispatcher.runOnce();
  const advanceSeconds = (seconds: number) => ctx.clock.advance(seconds * 1000);

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

  async function pay(merchant: TestMerchant, fields: Record<string, unknown> = {}) {
    const method = await merchant.call('POST', '/payment_methods/create', {
      type: 'card',
      card: { cardNo: visa, expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    assert.equal(method.status, 200, method.raw);
    const payment = await merchant.call('POST', '/payment/create', {
      amount: '1999',
      currency: 'USD',
      paymentMethod: method.body.data.id,
      confirm: true,
      ...fields,
    });
    assert.equal(payment.status, 200, payment.raw);
    assert.equal(payment.body.data.status, 'succeeded');
    const events = await merchant.call('GET', `/events?objectId=${payment.body.data.id}`);
    const event = events.body.data.data[0];
    assert.equal(event.type, 'payment.succeeded');
    return { payment: payment.body.data, event };
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

  test('delivers both kinds of a payment event, signed as docs/webhooks.md#what-is-sent with exactly these header names', async () => {
    const merchant = await ctx.merchant();
    const hook = await receiver();
    const endpoint = await createEndpoint(merchant, hook.url());
    const { payment, event } = await pay(merchant);

    assert.equal(await run(), 2);
    assert.equal(hook.requests.length, 2);
    const sentAt = formatRequestTime(ctx.clock.now());
    for (const request of hook.requests) {
      assert.equal(request.method, 'POST');
      assert.equal(request.path, '/webhook');
      assert.equal(header(request, 'Content-Type'), 'application/json');
      assert.equal(header(request, 'Request-Time'), sentAt);
      assert.match(header(request, 'Signature'), /^[0-9A-F]{64}$/);
      // The names on the wire are exactly these (PHP verifiers read them case-sensitively).
      const names = request.rawHeaders.filter((_, index) => index % 2 === 0);
      for (const name of ['Content-Type', 'Request-Time', 'Signature']) {
        assert.deepEqual(
          names.filter((candidate) => candidate.toLowerCase() === name.toLowerCase()),
          [name],
        );
      }
    }

    const endpointKind = hook.requests.find((request) => typeOf(request) === 'endpoint_payment.payment_succeeded');
    const legacyKind = hook.requests.find((request) => typeOf(request) === 'payment.succeeded');
    assert.ok(endpointKind && legacyKind);
    // The legacy body is the stored event exactly; the endpoint body differs only in `type`.
    assert.equal(legacyKind.body, canonicalJson(event));
    assert.equal(endpointKind.body, canonicalJson({ ...event, type: 'endpoint_payment.payment_succeeded' }));
    const parsed = JSON.parse(endpointKind.body);
    assert.deepEqual(Object.keys(parsed), ['id', 'apiVersion', 'type', 'created', 'sequence', 'data']);
    assert.equal(parsed.id, event.id);
    assert.equal(parsed.apiVersion, 'v1');
    assert.equal(parsed.data.id, payment.id);
    assert.equal(parsed.data.amount, '1999');

    // docs/webhooks.md#what-is-sent: the endpoint kind verifies with the endpoint's token, the legacy kind does not.
    assert.ok(signedWith(endpointKind, endpoint.token));
    assert.ok(!signedWith(legacyKind, endpoint.token));
    const now = ctx.clock.now();
    assert.equal(
      verifyWebhook({ headers: endpointKind.headers, rawBody: endpointKind.rawBody, token: endpoint.token, now }).id,
      event.id,
    );
    assert.throws(
      () => verifyWebhook({ headers: legacyKind.headers, rawBody: legacyKind.rawBody, token: endpoint.token, now }),
      (err: unknown) => err instanceof WebhookVerificationError && err.reason === 'bad_signature',
    );
    // It is signed with the merchant's separate legacy key instead.
    assert.ok(signedWith(legacyKind, await ctx.tessera.webhookEndpoints.legacyKeyFor(merchant.id)));

    // The delivery log says the same.
    const deliveries = await deliveriesOf(merchant, event.id);
    assert.equal(deliveries.length, 2);
    for (const delivery of deliveries) {
      assert.match(delivery.id, /^wd_\d{19}$/);
      assert.equal(delivery.eventId, event.id);
      assert.equal(delivery.endpointId, endpoint.id);
      assert.equal(delivery.url, hook.url());
      assert.equal(
        delivery.type,
        delivery.kind === 'endpoint' ? 'endpoint_payment.payment_succeeded' : 'payment.succeeded',
      );
      assert.equal(delivery.status, 'succeeded');
      assert.equal(delivery.attempts, 1);
      assert.equal(delivery.nextAttemptAt, null);
      assert.equal(delivery.lastAttemptAt, now.toISOString());
      const [attempt, ...more] = await attemptsOf(merchant, delivery.id);
      assert.equal(more.length, 0);
      assert.match(attempt!.id, /^wa_\d{19}$/);
      assert.equal(attempt!.attemptNumber, 1);
      assert.equal(attempt!.attemptedAt, now.toISOString());
      assert.equal(attempt!.httpStatus, 200);
      assert.equal(attempt!.responseExcerpt, 'success');
      assert.equal(attempt!.error, null);
      assert.equal(attempt!.succeeded, true);
      assert.ok(attempt!.durationMs >= 0);
      const single = await merchant.call('GET', `/webhook_deliveries/${delivery.id}`);
      assert.deepEqual(single.body.data, delivery);
    }
    assert.equal(deliveries.filter((delivery) => delivery.kind === 'endpoint').length, 1);

    // Acknowledged deliveries are never sent again.
    advanceSeconds(86_400);
    assert.equal(await run(), 0);
    assert.equal(hook.requests.length, 2);
  });

  test("sends to the payment's notifyUrl, signed with the merchant's dynamic endpoint token", async () => {
    const merchant = await ctx.merchant();
    const hook = await receiver();
    const notifyUrl = hook.url('/notify/order-42?source=tessera');
    // docs/webhooks.md: a new merchant's dynamic endpoint sends the endpoint_ kind only, unless asked.
    const before = await pay(merchant, { notifyUrl });
    await run();
    assert.deepEqual(hook.requests.map(typeOf), ['endpoint_payment.payment_succeeded']);
    assert.equal((await deliveriesOf(merchant, before.event.id)).length, 1);
    hook.requests.length = 0;

    const dynamic = await dynamicEndpointToken(merchant);
    const legacyOn = await merchant.call('POST', `/webhook_endpoints/${dynamic.id}/update`, {
      legacyNotifications: true,
    });
    assert.equal(legacyOn.status, 200, legacyOn.raw);
    const { event } = await pay(merchant, { notifyUrl });
    await run();
    assert.equal(hook.requests.length, 2);
    for (const request of hook.requests) {
      assert.equal(request.path, '/notify/order-42?source=tessera');
      const isEndpointKind = typeOf(request).startsWith('endpoint_');
      assert.equal(signedWith(request, dynamic.token), isEndpointKind);
    }
    const deliveries = await deliveriesOf(merchant, event.id);
    assert.deepEqual(
      deliveries.map((delivery) => [delivery.endpointId, delivery.url, delivery.status]),
      [
        [dynamic.id, notifyUrl, 'succeeded'],
        [dynamic.id, notifyUrl, 'succeeded'],
      ],
    );
  });

  test('an endpoint with legacyNotifications off gets only the endpoint kind; an unsubscribed one nothing', async () => {
    const merchant = await ctx.merchant();
    const hook = await receiver();
    const other = await receiver();
    const endpoint = await createEndpoint(merchant, hook.url(), { legacyNotifications: false });
    await createEndpoint(merchant, other.url(), { enabledEvents: ['refund.succeeded'] });
    const { event } = await pay(merchant);
    await run();
    assert.deepEqual(hook.requests.map(typeOf), ['endpoint_payment.payment_succeeded']);
    assert.ok(signedWith(hook.requests[0]!, endpoint.token));
    assert.equal(other.requests.length, 0);
    assert.deepEqual(
      (await deliveriesOf(merchant, event.id)).map((delivery) => delivery.kind),
      ['endpoint'],
    );
  });

  test('delivery starts right after the commit of the payment, without waiting for polling', async () => {
    const merchant = await ctx.merchant();
    const hook = await receiver();
    await createEndpoint(merchant, hook.url());
    ctx.tessera.webhookDispatcher.start();
    const startedAt = Date.now();
    await pay(merchant);
    await hook.waitFor(2, 5000);
    // The poll interval of this app is 10 minutes: only the wake-up on commit explains this.
    assert.ok(Date.now() - startedAt < 5000);
  });

  test('a payment nobody hears sets no claim going, and one with deliveries is claimed without first looking whether any is due', async () => {
    const db = ctx.tessera.db;
    const original = db.query;
    const read: string[] = [];
    // The statements the dispatcher sends about deliveries, from the commit on.
    db.query = ((sql: string, params?: readonly unknown[]) => {
      if (/FROM webhook_deliveries/.test(sql)) read.push(/SELECT EXISTS/.test(sql) ? 'look' : 'claim');
      return original(sql, params);
    }) as typeof db.query;
    try {
      const quiet = await ctx.merchant();
      ctx.tessera.webhookDispatcher.start();
      // start() looks once; the poll, ten minutes away, would look again.
      for (const started = Date.now(); read.length === 0 && Date.now() - started < 5000;) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      assert.deepEqual(read, ['look']);
      read.length = 0;
      await pay(quiet);
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.deepEqual(read, [], 'a payment of a merchant without endpoints and without notifyUrl');

      const merchant = await ctx.merchant();
      const hook = await receiver();
      await createEndpoint(merchant, hook.url());
      await pay(merchant);
      await hook.waitFor(2, 5000);
      assert.equal(read[0], 'claim', `the dispatcher's statements: ${read.join(', ')}`);
    } finally {
      db.query = original;
    }
  });

  test('a 2xx whose body is " success\\n" is delivered; surrounding white space is ignored', async () => {
    const merchant = await ctx.merchant();
    const hook = await receiver(() => ({ status: 202, body: ' success\n' }));
    await createEndpoint(merchant, hook.url(), { legacyNotifications: false });
    const { event } = await pay(merchant);
    await run();
    const [delivery] = await deliveriesOf(merchant, event.id);
    assert.equal(delivery!.status, 'succeeded');
  });

  // Each failure mode, then the retry exactly 30 s later (docs/webhooks.md#acknowledgement-and-retries), not a second earlier.
  const failureModes: Array<{
    name: string;
    setup: (hook: Receiver) => void | Promise<void>;
    check: (attempt: Record<string, any>) => void;
    refused?: boolean;
  }> = [
    {
      name: 'a 200 whose body is not "success"',
      setup: (hook) => hook.respond(() => ({ status: 200, body: '{"ok": "merci, c\'est reçu \\ {}"}\u0000' })),
      check: (attempt) => {
        assert.equal(attempt.httpStatus, 200);
        // Kept as text, quotes, braces and back-slashes included; NUL, which text columns refuse, replaced.
        assert.equal(attempt.responseExcerpt, '{"ok": "merci, c\'est reçu \\ {}"}\ufffd');
        assert.equal(attempt.error, 'The response body is not "success"');
      },
    },
    {
      name: 'HTTP 500 (even with body success)',
      setup: (hook) => hook.respond(() => ({ status: 500, body: 'success' })),
      check: (attempt) => {
        assert.equal(attempt.httpStatus, 500);
        assert.equal(attempt.responseExcerpt, 'success');
        assert.match(attempt.error, /HTTP 500/);
      },
    },
    {
      name: 'a timeout',
      setup: (hook) => hook.respond(() => ({ status: 200, body: 'success', delayMs: timeoutMs * 3 })),
      check: (attempt) => {
        assert.equal(attempt.httpStatus, null);
        assert.equal(attempt.responseExcerpt, null);
        assert.equal(attempt.error, `No complete response within ${timeoutMs} ms`);
        assert.ok(attempt.durationMs >= timeoutMs - 50, String(attempt.durationMs));
        assert.ok(attempt.durationMs < timeoutMs * 3, String(attempt.durationMs));
      },
    },
    {
      name: 'a reset connection',
      setup: (hook) => hook.respond(() => ({ reset: true })),
      check: (attempt) => {
        assert.equal(attempt.httpStatus, null);
        assert.match(attempt.error, /closed|reset/i);
      },
    },
    {
      name: 'a refused connection',
      refused: true,
      setup: () => {},
      check: (attempt) => {
        assert.equal(attempt.httpStatus, null);
        assert.equal(attempt.error, 'Connection refused');
      },
    },
  ];

  for (const mode of failureModes) {
    test(`${mode.name} is a failed attempt, retried exactly at the scheduled delay`, async () => {
      const merchant = await ctx.merchant();
      const hook = await receiver();
      await mode.setup(hook);
      const endpoint = await createEndpoint(merchant, mode.refused ? await refusingUrl() : hook.url(), {
        legacyNotifications: false,
      });
      const { event } = await pay(merchant);
      const firstAt = ctx.clock.now();
      await run();
      assert.equal(hook.requests.length, mode.refused ? 0 : 1);

      const [delivery] = await deliveriesOf(merchant, event.id);
      assert.equal(delivery!.status, 'pending');
      assert.equal(delivery!.attempts, 1);
      assert.equal(delivery!.nextAttemptAt, new Date(firstAt.getTime() + 30_000).toISOString());
      const [first] = await attemptsOf(merchant, delivery!.id);
      assert.equal(first!.succeeded, false);
      mode.check(first!);

      hook.respond(() => ({ status: 200, body: 'success' }));
      if (mode.refused) {
        // The merchant corrects its endpoint's url: the retry goes to the new one.
        const updated = await merchant.call('POST', `/webhook_endpoints/${endpoint.id}/update`, { url: hook.url() });
        assert.equal(updated.status, 200, updated.raw);
      }
      const before = hook.requests.length;
      advanceSeconds(29);
      assert.equal(await run(), 0);
      assert.equal(hook.requests.length, before, 'nothing is sent before the delay');
      advanceSeconds(1);
      assert.equal(await run(), 1);
      assert.equal(hook.requests.length, before + 1);
      assert.ok(signedWith(hook.requests.at(-1)!, endpoint.token));

      const [after] = await deliveriesOf(merchant, event.id);
      assert.equal(after!.status, 'succeeded');
      assert.equal(after!.attempts, 2);
      assert.equal(after!.url, hook.url());
      const attempts = await attemptsOf(merchant, delivery!.id);
      assert.deepEqual(
        attempts.map((attempt) => [attempt.attemptNumber, attempt.attemptedAt, attempt.succeeded]),
        [
          [1, firstAt.toISOString(), false],
          [2, new Date(firstAt.getTime() + 30_000).toISOString(), true],
        ],
      );
    });
  }

  test('follows the default (docs/webhooks.md#acknowledgement-and-retries) schedule exactly and gives up after the 13th attempt', async () => {
    assert.deepEqual(ctx.config.webhookRetryDelaysSeconds, specRetryDelaysSeconds);
    assert.deepEqual(loadConfig({}).webhookRetryDelaysSeconds, specRetryDelaysSeconds);
    assert.deepEqual(defaultWebhookRetryDelaysSeconds, specRetryDelaysSeconds);

    const merchant = await ctx.merchant();
    const hook = await receiver(() => ({ status: 503, body: 'down for maintenance' }));
    await createEndpoint(merchant, hook.url(), { legacyNotifications: false });
    const { event } = await pay(merchant);
    await run();
    const bodies = [hook.requests[0]!.body];
    const times = [ctx.clock.now().getTime()];
    for (const [index, delaySeconds] of specRetryDelaysSeconds.entries()) {
      advanceSeconds(delaySeconds - 1);
      await run();
      assert.equal(hook.requests.length, index + 1, `follow-up ${index + 1} not before ${delaySeconds}s`);
      advanceSeconds(1);
      await run();
      assert.equal(hook.requests.length, index + 2, `follow-up ${index + 1} at ${delaySeconds}s`);
      bodies.push(hook.requests.at(-1)!.body);
      times.push(ctx.clock.now().getTime());
    }
    // Every retry sends the same bytes; only Request-Time and Signature change.
    assert.equal(new Set(bodies).size, 1);
    assert.equal(new Set(hook.requests.map((request) => header(request, 'Request-Time'))).size, 13);

    const [delivery] = await deliveriesOf(merchant, event.id);
    assert.equal(delivery!.status, 'failed');
    assert.equal(delivery!.attempts, 13);
    assert.equal(delivery!.nextAttemptAt, null);
    const attempts = await attemptsOf(merchant, delivery!.id);
    assert.deepEqual(
      attempts.map((attempt) => attempt.attemptNumber),
      Array.from({ length: 13 }, (_, index) => index + 1),
    );
    assert.deepEqual(
      attempts.map((attempt) => Date.parse(attempt.attemptedAt)),
      times,
    );
    assert.ok(attempts.every((attempt) => attempt.httpStatus === 503 && !attempt.succeeded));
    // The follow-ups span the sum of the delays: 24 h 3 min 30 s (docs/webhooks.md#acknowledgement-and-retries "over 25 hours").
    assert.equal(times.at(-1)! - times[0]!, 86_610_000);

    advanceSeconds(7 * 86_400);
    assert.equal(await run(), 0);
    assert.equal(hook.requests.length, 13);

    // The failed filter finds it; the other filters do not.
    const failed = await merchant.call('GET', '/webhook_deliveries?status=failed');
    assert.deepEqual(
      failed.body.data.data.map((item: { id: string }) => item.id),
      [delivery!.id],
    );
    const pending = await merchant.call('GET', '/webhook_deliveries?status=pending');
    assert.deepEqual(pending.body.data.data, []);
  });

  test('a rolled token signs the very next retry; the old one no longer verifies', async () => {
    const merchant = await ctx.merchant();
    const hook = await receiver(() => ({ status: 500, body: 'error' }));
    const endpoint = await createEndpoint(merchant, hook.url(), { legacyNotifications: false });
    await pay(merchant);
    await run();
    assert.ok(signedWith(hook.requests[0]!, endpoint.token));

    const rolled = await merchant.call('POST', `/webhook_endpoints/${endpoint.id}/roll_token`, {});
    assert.equal(rolled.status, 200, rolled.raw);
    const newToken: string = rolled.body.data.token;
    assert.notEqual(newToken, endpoint.token);
    hook.respond(() => ({ status: 200, body: 'success' }));
    advanceSeconds(30);
    await run();
    const retry = hook.requests[1]!;
    assert.ok(signedWith(retry, newToken));
    assert.ok(!signedWith(retry, endpoint.token));
    assert.equal(retry.body, hook.requests[0]!.body);
  });

  /** A receiver whose first `slow` answers take `delayMs`: notifications claimed after them wait in the queue. */
  async function slowFirstReceiver(slow: number, delayMs: number): Promise<Receiver> {
    let answered = 0;
    return receiver(() => ({ status: 200, body: 'success', delayMs: ++answered <= slow ? delayMs : 0 }));
  }

  test('a roll reaches notifications already claimed: those sent after it are signed with the new token', async () => {
    const merchant = await ctx.merchant();
    const hook = await slowFirstReceiver(perTargetCap, 700);
    const endpoint = await createEndpoint(merchant, hook.url(), { legacyNotifications: false });
    const payments = 2 * perTargetCap;
    for (let index = 0; index < payments; index++) await pay(merchant);

    // One claim takes all of them: the cap goes out, the rest wait in this process for a slot.
    const drained = run();
    await hook.waitFor(perTargetCap);
    const sentBeforeRoll = hook.requests.length;
    const rolled = await merchant.call('POST', `/webhook_endpoints/${endpoint.id}/roll_token`);
    assert.equal(rolled.status, 200, rolled.raw);
    await drained;

    assert.equal(hook.requests.length, payments);
    assert.equal(sentBeforeRoll, perTargetCap);
    for (const request of hook.requests.slice(0, perTargetCap)) assert.ok(signedWith(request, endpoint.token));
    for (const request of hook.requests.slice(perTargetCap)) {
      assert.ok(signedWith(request, rolled.body.data.token), 'claimed before the roll, sent after it');
      assert.ok(!signedWith(request, endpoint.token));
    }
  });

  test(
    'a roll in another process reaches the notifications this one has claimed, by the next poll',
    { skip: databaseKind !== 'postgres' },
    async () => {
      // The sender polls often; the roll is made through the first service, which does not send.
      const sender: Tessera = await createTessera({
        config: { ...ctx.config, webhookPollIntervalMs: 50 },
        clock: ctx.clock,
        logger: createLogger('silent'),
      });
      try {
        const merchant = await ctx.merchant();
        const hook = await slowFirstReceiver(perTargetCap, 800);
        const endpoint = await createEndpoint(merchant, hook.url(), { legacyNotifications: false });
        const payments = 2 * perTargetCap;
        for (let index = 0; index < payments; index++) await pay(merchant);

        sender.webhookDispatcher.start();
        await hook.waitFor(perTargetCap);
        const rolled = await merchant.call('POST', `/webhook_endpoints/${endpoint.id}/roll_token`);
        assert.equal(rolled.status, 200, rolled.raw);
        await hook.waitFor(payments, 10_000);

        for (const request of hook.requests.slice(0, perTargetCap)) assert.ok(signedWith(request, endpoint.token));
        for (const request of hook.requests.slice(perTargetCap)) {
          assert.ok(signedWith(request, rolled.body.data.token), 'claimed before the roll, sent after it');
        }
      } finally {
        await sender.close();
      }
    },
  );

  test('resend sends the same bodies again as new deliveries, to every target or to one endpoint', async () => {
    const merchant = await ctx.merchant();
    const first = await receiver();
    const second = await receiver();
    const notify = await receiver();
    const one = await createEndpoint(merchant, first.url());
    await createEndpoint(merchant, second.url(), { legacyNotifications: false });
    const { id: dynamicId } = await dynamicEndpointToken(merchant);
    await merchant.call('POST', `/webhook_endpoints/${dynamicId}/update`, { legacyNotifications: true });
    const { event } = await pay(merchant, { notifyUrl: notify.url('/notify') });
    await run();
    assert.deepEqual([first.requests.length, second.requests.length, notify.requests.length], [2, 1, 2]);
    const originalDeliveries = await deliveriesOf(merchant, event.id);
    assert.equal(originalDeliveries.length, 5);

    advanceSeconds(3600);
    const all = await merchant.call('POST', `/events/${event.id}/resend`, {});
    assert.equal(all.status, 200, all.raw);
    assert.equal(all.body.data.data.length, 5);
    for (const delivery of all.body.data.data) {
      assert.equal(delivery.status, 'pending');
      assert.equal(delivery.attempts, 0);
      assert.ok(!originalDeliveries.some((original) => original.id === delivery.id));
    }
    await run();
    assert.deepEqual([first.requests.length, second.requests.length, notify.requests.length], [4, 2, 4]);
    for (const hook of [first, second, notify]) {
      const half = hook.requests.length / 2;
      assert.deepEqual(
        hook.requests
          .slice(half)
          .map((request) => request.body)
          .sort(),
        hook.requests
          .slice(0, half)
          .map((request) => request.body)
          .sort(),
        'byte-identical bodies',
      );
      // Signed anew, at the time of the resend.
      assert.equal(header(hook.requests.at(-1)!, 'Request-Time'), formatRequestTime(ctx.clock.now()));
    }

    const toOne = await merchant.call('POST', `/events/${event.id}/resend`, { endpointId: one.id });
    assert.equal(toOne.status, 200, toOne.raw);
    assert.deepEqual(toOne.body.data.data.map((delivery: { kind: string }) => delivery.kind).sort(), [
      'endpoint',
      'legacy',
    ]);
    await run();
    assert.deepEqual([first.requests.length, second.requests.length, notify.requests.length], [6, 2, 4]);

    const dynamic = await dynamicEndpointToken(merchant);
    const toNotify = await merchant.call('POST', `/events/${event.id}/resend`, { endpointId: dynamic.id });
    assert.equal(toNotify.status, 200, toNotify.raw);
    await run();
    assert.deepEqual([first.requests.length, second.requests.length, notify.requests.length], [6, 2, 6]);
    assert.ok(
      signedWith(
        notify.requests.find((request) => typeOf(request).startsWith('endpoint_'))!,
        dynamic.token,
      ),
    );

    assert.equal((await deliveriesOf(merchant, event.id)).length, 5 + 5 + 2 + 2);

    const missingEvent = await merchant.call('POST', '/events/evt_1000000000000000000/resend', {});
    assert.equal(missingEvent.status, 404);
    assert.equal(missingEvent.body.code, 'resource_missing');
    const missingEndpoint = await merchant.call('POST', `/events/${event.id}/resend`, {
      endpointId: 'we_1000000000000000000',
    });
    assert.equal(missingEndpoint.status, 404);
    assert.equal(missingEndpoint.body.data.param, 'endpointId');
    // Another merchant sees neither the event nor its deliveries.
    const stranger = await ctx.merchant();
    assert.equal((await stranger.call('POST', `/events/${event.id}/resend`, {})).status, 404);
    assert.equal((await stranger.call('GET', `/events/${event.id}/deliveries`)).status, 404);
    assert.equal((await stranger.call('GET', `/webhook_deliveries/${originalDeliveries[0]!.id}`)).status, 404);
    assert.equal((await stranger.call('GET', `/webhook_deliveries/${originalDeliveries[0]!.id}/attempts`)).status, 404);
  });

  test('a delivery claimed by a worker that died is delivered once its lease has run out', async () => {
    const merchant = await ctx.merchant();
    const hook = await receiver();
    await createEndpoint(merchant, hook.url(), { legacyNotifications: false });
    const { event } = await pay(merchant);

    // A worker claims the delivery, then dies before sending or recording anything.
    const now = ctx.clock.now();
    const deadLease = new Date(now.getTime() + leaseMsFor(timeoutMs));
    const { deliveries: claimed } = await claimDueDeliveries(ctx.tessera.db, {
      now,
      leaseUntil: deadLease,
      limit: 100,
      perTargetLimit: 100,
      busyTargets: [],
      busyCounts: [],
      saturatedTargets: [],
      claimedBy: 'proc_dead',
    });
    assert.equal(claimed.length, 1);

    assert.equal(await run(), 0);
    ctx.clock.set(new Date(deadLease.getTime() - 1000));
    assert.equal(await run(), 0);
    assert.equal(hook.requests.length, 0, 'not while the lease holds');
    ctx.clock.set(deadLease);
    assert.equal(await run(), 1);
    assert.equal(hook.requests.length, 1);
    const [delivery] = await deliveriesOf(merchant, event.id);
    assert.equal(delivery!.status, 'succeeded');
    assert.equal(delivery!.attempts, 1);

    // Had the dead worker come back late, its record would be refused: the attempt is not counted twice.
    const late = await recordAttemptGroup(ctx.tessera.db, [
      {
        deliveryId: claimed[0]!.id,
        leaseUntil: deadLease,
        attemptId: 'wa_1000000000000000000',
        attemptNumber: 1,
        attemptedAt: now,
        durationMs: 1,
        httpStatus: 200,
        responseExcerpt: 'success',
        error: null,
        succeeded: true,
        status: 'succeeded',
        nextAttemptAt: null,
        url: hook.url(),
        endpointId: claimed[0]!.endpoint_id,
        countsForHealth: true,
        now,
      },
    ]);
    assert.equal(late.recorded.size, 0);
    assert.equal((await attemptsOf(merchant, delivery!.id)).length, 1);
  });

  test('an attempt whose record could not be written is made again once its lease has run out', async () => {
    const merchant = await ctx.merchant();
    const hook = await receiver();
    await createEndpoint(merchant, hook.url(), { legacyNotifications: false });
    const { event } = await pay(merchant);

    // The database refuses attempt records after the receiver has answered (an outage).
    await ctx.tessera.db.query(
      `CREATE FUNCTION test_refuse_attempts() RETURNS trigger LANGUAGE plpgsql
       AS $$ BEGIN RAISE EXCEPTION 'attempt records refused by the test'; END $$`,
    );
    await ctx.tessera.db.query(
      'CREATE TRIGGER test_refuse_attempts BEFORE INSERT ON webhook_attempts FOR EACH STATEMENT EXECUTE FUNCTION test_refuse_attempts()',
    );
    const claimedAt = ctx.clock.now().getTime();
    try {
      assert.equal(await run(), 0);
    } finally {
      await ctx.tessera.db.query('DROP TRIGGER test_refuse_attempts ON webhook_attempts');
      await ctx.tessera.db.query('DROP FUNCTION test_refuse_attempts()');
    }
    assert.equal(hook.requests.length, 1, 'sent once');
    const [unrecorded] = await deliveriesOf(merchant, event.id);
    assert.equal(unrecorded!.status, 'pending');
    assert.equal(unrecorded!.attempts, 0);

    // Not lost, and not sent again while the lease holds; then sent and recorded.
    ctx.clock.set(new Date(claimedAt + leaseMsFor(timeoutMs) - 1000));
    assert.equal(await run(), 0);
    assert.equal(hook.requests.length, 1);
    ctx.clock.set(new Date(claimedAt + leaseMsFor(timeoutMs)));
    assert.equal(await run(), 1);
    assert.equal(hook.requests.length, 2);
    const [delivery] = await deliveriesOf(merchant, event.id);
    assert.equal(delivery!.status, 'succeeded');
    assert.equal(delivery!.attempts, 1);
    assert.equal((await attemptsOf(merchant, delivery!.id)).length, 1);
  });

  test("a target's next deliveries go out while earlier attempts still wait to be written", async () => {
    const merchant = await ctx.merchant();
    const hook = await receiver();
    await createEndpoint(merchant, hook.url(), { legacyNotifications: false });
    const deliveries = 3 * perTargetCap;
    for (let index = 0; index < deliveries; index++) await pay(merchant);

    const running = run();
    await hook.waitFor(1, 5000);
    // Attempt records now wait for a lock the test holds: a slow or stalled database write.
    let unlock!: () => void;
    const unlocked = new Promise<void>((resolve) => (unlock = resolve));
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => (locked = resolve));
    const holder = ctx.tessera.db.transaction(async (tx) => {
      await tx.query('LOCK TABLE webhook_attempts IN EXCLUSIVE MODE');
      locked();
      await unlocked;
    });
    try {
      await lockTaken;
      // A slot is free as soon as its answer arrives; the records follow when they can.
      await hook.waitFor(deliveries, 5000);
    } finally {
      unlock();
      await holder;
    }
    assert.equal(await running, deliveries);
    assert.ok(hook.maxConcurrent() <= perTargetCap, String(hook.maxConcurrent()));
    assert.equal(new Set(hook.requests.map((request) => request.body)).size, deliveries, 'each delivery once');
    const pending = await merchant.call('GET', '/webhook_deliveries?status=pending');
    assert.deepEqual(pending.body.data.data, []);
  });

  test('a stopped dispatcher hands back the deliveries it claimed ahead, so they are sent at once', async () => {
    const merchant = await ctx.merchant();
    const hook = await receiver(() => ({ status: 200, body: 'success', delayMs: 300 }));
    await createEndpoint(merchant, hook.url(), { legacyNotifications: false });
    const deliveries = 3 * perTargetCap;
    for (let index = 0; index < deliveries; index++) await pay(merchant);

    ctx.tessera.webhookDispatcher.start();
    await hook.waitFor(perTargetCap, 5000);
    await ctx.tessera.webhookDispatcher.stop();
    const sent = hook.requests.length;
    assert.ok(sent < deliveries, String(sent));
    // The clock has not moved, so every lease taken before the stop still holds: only deliveries
    // handed back can be claimed now.
    assert.equal(await run(), deliveries - sent);
    assert.equal(hook.requests.length, deliveries);
    assert.equal(new Set(hook.requests.map((request) => request.body)).size, deliveries, 'each delivery once');
  });

  test('an event committed without a wake-up (a crash before dispatch) is delivered by polling', async () => {
    const merchant = await ctx.merchant();
    const hook = await receiver();
    await createEndpoint(merchant, hook.url());
    // The event and its deliveries commit; the process "crashes" before anyone is told.
    const recorded = await ctx.tessera.db.transaction((tx) =>
      ctx.tessera.events.record(tx, { merchantId: merchant.id, mode: 'test' }, 'payment.succeeded', {
        id: 'pt_1000000000000000001',
        amount: '500',
        currency: 'USD',
        notifyUrl: null,
      }),
    );
    assert.equal(hook.requests.length, 0);
    // What the poll does every TESSERA_WEBHOOK_POLL_INTERVAL_MS in a running dispatcher.
    assert.equal(await run(), 2);
    assert.deepEqual(hook.requests.map(typeOf).sort(), ['endpoint_payment.payment_succeeded', 'payment.succeeded']);
    // The object's first event: sequence 1 between the body's head and tail (docs/webhooks.md#sequence-telling-a-stale-event-from-a-new-one).
    assert.equal(
      hook.requests.find((request) => typeOf(request) === 'payment.succeeded')!.body,
      `${recorded.bodyHead}1${recorded.bodyTail}`,
    );
  });

  test('a slow endpoint never delays the deliveries of others (per-target concurrency cap)', async () => {
    const slowMerchant = await ctx.merchant();
    const fastMerchant = await ctx.merchant();
    const slow = await receiver(() => ({ status: 200, body: 'success', delayMs: 300 }));
    const fast = await receiver();
    await createEndpoint(slowMerchant, slow.url(), { legacyNotifications: false });
    await createEndpoint(fastMerchant, fast.url(), { legacyNotifications: false });
    for (let index = 0; index < 3 * perTargetCap; index++) await pay(slowMerchant);
    await pay(fastMerchant);

    const startedAt = Date.now();
    const running = run();
    await fast.waitFor(1, 2000);
    const fastAfterMs = Date.now() - startedAt;
    assert.equal(await running, 3 * perTargetCap + 1);
    const slowAfterMs = Date.now() - startedAt;
    assert.equal(slow.requests.length, 3 * perTargetCap);
    assert.equal(slow.maxConcurrent(), perTargetCap);
    // The fast endpoint did not wait for the slow one's backlog (three rounds of 300 ms).
    assert.ok(fastAfterMs < slowAfterMs / 2, `${fastAfterMs} ms vs ${slowAfterMs} ms`);
  });

  test('a backlog to one endpoint drains completely in one run, never more than the cap at once', async () => {
    const merchant = await ctx.merchant();
    const hook = await receiver();
    await createEndpoint(merchant, hook.url());
    const events = 60;
    await ctx.tessera.db.transaction(async (tx) => {
      for (let index = 0; index < events; index++) {
        await ctx.tessera.events.record(tx, { merchantId: merchant.id, mode: 'test' }, 'payment.succeeded', {
          id: `pt_${2000000000000000000n + BigInt(index)}`,
          amount: String(index),
          notifyUrl: null,
        });
      }
    });
    assert.equal(await run(), events * 2);
    assert.equal(hook.requests.length, events * 2);
    assert.ok(hook.maxConcurrent() <= perTargetCap, String(hook.maxConcurrent()));
    const pending = await merchant.call('GET', '/webhook_deliveries?status=pending');
    assert.deepEqual(pending.body.data.data, []);
  });

  test('non-ASCII payment fields arrive in a body that PHP-style verifiers re-encode byte for byte', async () => {
    const merchant = await ctx.merchant();
    const hook = await receiver();
    const endpoint = await createEndpoint(merchant, hook.url());
    const description = '订单 №42 – ünïcødé – طلب شراء – 🎉💳 – a/b\\c "quoted"';
    const shipping = {
      firstName: 'Zoë',
      lastName: '李',
      phone: '+86 10 1234 5678',
      address: { city: 'القاهرة', country: 'EG', line1: 'شارع التحرير ١٢', line2: '', postalCode: '11511', state: '' },
    };
    const { event } = await pay(merchant, {
      description,
      shipping,
      lineItems: [
        { name: 'Ласточка / 燕子', amount: 19.99, quantity: 1, images: ['https://x.example/i.png'] },
        // PHP writes small floats back as 1.0e-5, not 0.00001: the body must already be in that form.
        { name: 'sample', amount: 0.00001, quantity: 1 },
        { name: 'sample', amount: 0.000025, quantity: 2 },
      ],
    });
    await run();
    assert.equal(hook.requests.length, 2);
    for (const request of hook.requests) {
      assert.match(request.body, /^[\x20-\x7e]*$/, 'non-ASCII is \\u-escaped');
      assert.equal(phpReencode(request.body), request.body);
      const data = JSON.parse(request.body).data;
      assert.equal(data.description, description);
      assert.equal(data.shipping.address.city, 'القاهرة');
      assert.deepEqual(
        data.lineItems.map((item: { amount: number }) => item.amount),
        [19.99, 0.00001, 0.000025],
      );
      assert.ok(request.body.includes('"amount":1.0e-5,'), 'small amounts in the form PHP writes');
      assert.equal(data.id, event.data.id);
    }
    // The PHP SDK verifies over its re-encoding, with the headers read as Request-Time and Signature.
    const endpointKind = hook.requests.find((request) => typeOf(request).startsWith('endpoint_'))!;
    assert.equal(
      hmac(endpoint.token, header(endpointKind, 'Request-Time'), phpReencode(endpointKind.body)),
      header(endpointKind, 'Signature'),
    );
    // The data part is the same bytes in both kinds and in the stored event.
    const dataOf = (body: string) => body.slice(body.indexOf(',"data":'));
    assert.equal(dataOf(hook.requests[0]!.body), dataOf(hook.requests[1]!.body));
    assert.equal(dataOf(hook.requests[0]!.body), dataOf(canonicalJson(event)));
  });

  test('deliveries to a deleted or disabled endpoint are ended, not sent', async () => {
    const merchant = await ctx.merchant();
    const hook = await receiver(() => ({ status: 500, body: 'error' }));
    const endpoint = await createEndpoint(merchant, hook.url(), { legacyNotifications: false });
    const { event } = await pay(merchant);
    await run();
    assert.equal(hook.requests.length, 1);
    const removed = await merchant.call('DELETE', `/webhook_endpoints/${endpoint.id}`);
    assert.equal(removed.status, 200, removed.raw);
    advanceSeconds(30);
    await run();
    assert.equal(hook.requests.length, 1);
    const [delivery] = await deliveriesOf(merchant, event.id);
    assert.equal(delivery!.status, 'failed');
    const attempts = await attemptsOf(merchant, delivery!.id);
    assert.equal(attempts.length, 2);
    assert.equal(attempts[1]!.error, 'Not sent: the webhook endpoint was deleted');
  });

  test('POST /events/{id}/resend needs no body: without one it resends to every current target', async () => {
    const merchant = await ctx.merchant();
    const hook = await receiver();
    await createEndpoint(merchant, hook.url());
    const { event } = await pay(merchant);
    await run();
    assert.equal(hook.requests.length, 2);
    // No body and no Content-Type at all, as `curl -X POST …/resend` sends it.
    const resent = await merchant.call('POST', `/events/${event.id}/resend`);
    assert.equal(resent.status, 200, resent.raw);
    assert.equal(resent.body.data.data.length, 2);
    await run();
    assert.equal(hook.requests.length, 4);
    assert.deepEqual(
      hook.requests
        .slice(2)
        .map((request) => request.body)
        .sort(),
      hook.requests
        .slice(0, 2)
        .map((request) => request.body)
        .sort(),
    );
  });

  test("an event's deliveries filter by status and endpoint; its attempts are listed with their delivery", async () => {
    const merchant = await ctx.merchant();
    const good = await receiver();
    const bad = await receiver(() => ({ status: 500, body: 'error' }));
    const goodEndpoint = await createEndpoint(merchant, good.url(), { legacyNotifications: false });
    const badEndpoint = await createEndpoint(merchant, bad.url(), { legacyNotifications: false });
    const { event } = await pay(merchant);
    await run();
    advanceSeconds(30);
    await run();
    const list = async (query: string) => {
      const response = await merchant.call('GET', `/events/${event.id}/deliveries${query}`);
      assert.equal(response.status, 200, response.raw);
      return response.body.data.data as Array<Record<string, any>>;
    };
    const [succeeded] = await list('?status=succeeded');
    assert.equal(succeeded!.endpointId, goodEndpoint.id);
    const [pending] = await list('?status=pending');
    assert.equal(pending!.endpointId, badEndpoint.id);
    assert.deepEqual(await list('?status=failed'), []);
    assert.deepEqual(
      (await list(`?endpointId=${badEndpoint.id}`)).map((delivery) => delivery.id),
      [pending!.id],
    );
    assert.equal((await merchant.call('GET', `/events/${event.id}/deliveries?status=lost`)).status, 400);

    const attempts = await merchant.call('GET', `/events/${event.id}/attempts`);
    assert.equal(attempts.status, 200, attempts.raw);
    assert.deepEqual(
      (attempts.body.data.data as Array<Record<string, any>>).map((attempt) => [
        attempt.deliveryId,
        attempt.attemptNumber,
        attempt.httpStatus,
        attempt.succeeded,
      ]),
      [
        ...[
          [succeeded!.id, 1, 200, true],
          [pending!.id, 1, 500, false],
        ].sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
        [pending!.id, 2, 500, false],
      ],
    );
    assert.equal(attempts.body.data.hasMore, false);
    assert.deepEqual(
      await attemptsOf(merchant, pending!.id),
      (attempts.body.data.data as Array<{ deliveryId: string }>).filter(
        (attempt) => attempt.deliveryId === pending!.id,
      ),
    );
    assert.equal((await merchant.call('GET', '/events/evt_1000000000000000000/attempts')).status, 404);
    const stranger = await ctx.merchant();
    assert.equal((await stranger.call('GET', `/events/${event.id}/attempts`)).status, 404);
  });

  test('a delivery given up after its 13th attempt can be resent by hand, with the same body and the current token', async () => {
    const merchant = await ctx.merchant();
    const hook = await receiver(() => ({ status: 503, body: 'down' }));
    const endpoint = await createEndpoint(merchant, hook.url(), { legacyNotifications: false });
    const { event } = await pay(merchant);
    await run();
    for (const delaySeconds of specRetryDelaysSeconds) {
      advanceSeconds(delaySeconds);
      await run();
    }
    assert.equal(hook.requests.length, 13);
    const [given] = await deliveriesOf(merchant, event.id);
    assert.equal(given!.status, 'failed');

    const rolled = await merchant.call('POST', `/webhook_endpoints/${endpoint.id}/roll_token`);
    assert.equal(rolled.status, 200, rolled.raw);
    hook.respond(answerSuccess);
    const resent = await merchant.call('POST', `/webhook_deliveries/${given!.id}/resend`);
    assert.equal(resent.status, 200, resent.raw);
    const fresh = resent.body.data;
    assert.notEqual(fresh.id, given!.id);
    assert.deepEqual(
      [fresh.eventId, fresh.endpointId, fresh.kind, fresh.type, fresh.status, fresh.attempts],
      [event.id, endpoint.id, 'endpoint', 'endpoint_payment.payment_succeeded', 'pending', 0],
    );
    await run();
    assert.equal(hook.requests.length, 14);
    const last = hook.requests.at(-1)!;
    assert.equal(last.body, hook.requests[0]!.body);
    assert.ok(signedWith(last, rolled.body.data.token));
    assert.equal((await merchant.call('GET', `/webhook_deliveries/${fresh.id}`)).body.data.status, 'succeeded');
    // The given-up delivery keeps its log.
    assert.equal((await attemptsOf(merchant, given!.id)).length, 13);

    assert.equal((await merchant.call('POST', '/webhook_deliveries/wd_1000000000000000000/resend')).status, 404);
    const stranger = await ctx.merchant();
    assert.equal((await stranger.call('POST', `/webhook_deliveries/${given!.id}/resend`)).status, 404);
    await merchant.call('POST', `/webhook_endpoints/${endpoint.id}/update`, { status: 'disabled' });
    const disabled = await merchant.call('POST', `/webhook_deliveries/${given!.id}/resend`);
    assert.equal(disabled.status, 400, disabled.raw);
    assert.equal(disabled.body.code, 'invalid_state');
  });

  test('lists deliveries by status and endpoint, newest first, for the merchant only', async () => {
    const merchant = await ctx.merchant();
    const good = await receiver();
    const bad = await receiver(() => ({ status: 500 }));
    const goodEndpoint = await createEndpoint(merchant, good.url(), { legacyNotifications: false });
    const badEndpoint = await createEndpoint(merchant, bad.url(), { legacyNotifications: false });
    await pay(merchant);
    await pay(merchant);
    await run();
    const list = async (query: string) => {
      const response = await merchant.call('GET', `/webhook_deliveries${query}`);
      assert.equal(response.status, 200, response.raw);
      return response.body.data;
    };
    assert.equal((await list('')).data.length, 4);
    const page = await list('?limit=3');
    assert.equal(page.data.length, 3);
    assert.equal(page.hasMore, true);
    const succeeded = await list('?status=succeeded');
    assert.ok(succeeded.data.every((delivery: { endpointId: string }) => delivery.endpointId === goodEndpoint.id));
    assert.equal(succeeded.data.length, 2);
    const pending = await list(`?status=pending&endpointId=${badEndpoint.id}`);
    assert.equal(pending.data.length, 2);
    assert.equal((await list(`?endpointId=${goodEndpoint.id}&status=failed`)).data.length, 0);
    assert.equal((await merchant.call('GET', '/webhook_deliveries?status=lost')).status, 400);
    assert.equal((await merchant.call('GET', '/webhook_deliveries/wd_1000000000000000000')).status, 404);
    const stranger = await ctx.merchant();
    assert.equal((await stranger.call('GET', '/webhook_deliveries')).body.data.data.length, 0);
  });

  test(
    'two dispatchers on one PostgreSQL make each attempt exactly once',
    { skip: databaseKind !== 'postgres' },
    async () => {
      const second: Tessera = await createTessera({
        config: ctx.config,
        clock: ctx.clock,
        logger: createLogger('silent'),
      });
      try {
        const merchant = await ctx.merchant();
        const hook = await receiver(() => ({ status: 500, body: 'not yet' }));
        await createEndpoint(merchant, hook.url());
        const payments = 20;
        for (let index = 0; index < payments; index++) await pay(merchant);
        const deliveries = payments * 2;

        const counts = await Promise.all([run(), second.webhookDispatcher.runOnce()]);
        assert.equal(counts[0] + counts[1], deliveries);
        assert.equal(hook.requests.length, deliveries);
        assert.equal(new Set(hook.requests.map((request) => request.body)).size, deliveries, 'each delivery once');

        hook.respond(() => ({ status: 200, body: 'success' }));
        advanceSeconds(30);
        const retries = await Promise.all([run(), second.webhookDispatcher.runOnce()]);
        assert.equal(retries[0] + retries[1], deliveries);
        assert.equal(hook.requests.length, deliveries * 2);
        const perBody = new Map<string, number>();
        for (const request of hook.requests) perBody.set(request.body, (perBody.get(request.body) ?? 0) + 1);
        assert.ok([...perBody.values()].every((count) => count === 2));

        const rows = await ctx.tessera.db.query<{ attempts: number; status: string; recorded: string }>(
          `SELECT d.attempts, d.status, (SELECT count(*) FROM webhook_attempts a WHERE a.delivery_id = d.id) AS recorded
         FROM webhook_deliveries d WHERE d.merchant_id = $1`,
          [merchant.id],
        );
        assert.equal(rows.length, deliveries);
        assert.ok(rows.every((row) => row.attempts === 2 && row.status === 'succeeded' && Number(row.recorded) === 2));
      } finally {
        await second.close();
      }
    },
  );
});

describe(`webhook delivery with a configured retry schedule (${databaseKind})`, () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await startTestApp({ env: { TESSERA_WEBHOOK_RETRY_DELAYS_SECONDS: '1,5' } });
  });
  after(() => ctx.close());

  test('uses the configured delays and gives up after the last one', async () => {
    assert.deepEqual(ctx.config.webhookRetryDelaysSeconds, [1, 5]);
    const merchant = await ctx.merchant();
    const hook = await startReceiver(() => ({ status: 500 }));
    try {
      const created = await merchant.call('POST', '/webhook_endpoints/create', {
        url: hook.url(),
        legacyNotifications: false,
      });
      assert.equal(created.status, 200, created.raw);
      const method = await merchant.call('POST', '/payment_methods/create', {
        type: 'card',
        card: { cardNo: visa, expMonth: '12', expYear: '2030', securityCode: '123' },
      });
      const payment = await merchant.call('POST', '/payment/create', {
        amount: '100',
        currency: 'USD',
        paymentMethod: method.body.data.id,
        confirm: true,
      });
      assert.equal(payment.status, 200, payment.raw);
      const run = () => ctx.tessera.webhookDispatcher.runOnce();
      assert.equal(await run(), 1);
      ctx.clock.advance(1000);
      assert.equal(await run(), 1);
      ctx.clock.advance(4000);
      assert.equal(await run(), 0);
      ctx.clock.advance(1000);
      assert.equal(await run(), 1);
      ctx.clock.advance(86_400_000);
      assert.equal(await run(), 0);
      assert.equal(hook.requests.length, 3);
      const failed = await merchant.call('GET', '/webhook_deliveries?status=failed');
      assert.equal(failed.body.data.data.length, 1);
      assert.equal(failed.body.data.data[0].attempts, 3);
    } finally {
      await hook.close();
    }
  });

  test('the schedule setting is refused in production and must be whole seconds', () => {
    const production = { NODE_ENV: 'production', TESSERA_MASTER_KEY: 'a'.repeat(64) };
    assert.throws(() => loadConfig({ ...production, TESSERA_WEBHOOK_RETRY_DELAYS_SECONDS: '1,2' }), /for tests/);
    assert.deepEqual(loadConfig(production).webhookRetryDelaysSeconds, specRetryDelaysSeconds);
    assert.throws(() => loadConfig({ TESSERA_WEBHOOK_RETRY_DELAYS_SECONDS: '1,x' }), /whole numbers/);
    assert.deepEqual(loadConfig({ TESSERA_WEBHOOK_RETRY_DELAYS_SECONDS: 'none' }).webhookRetryDelaysSeconds, []);
    assert.equal(loadConfig({}).webhookTimeoutMs, 10_000);
  });
});

describe('webhook HTTP client', () => {
  test('in production refuses loopback and private addresses at connect time, whatever DNS said before', async () => {
    const hook = await startReceiver();
    const port = new URL(hook.url()).port;
    // A name that resolves to loopback now, as after a DNS rebinding.
    const resolve = async () => [{ address: '127.0.0.1', family: 4 }];
    const production = createWebhookHttpClient({ timeoutMs, production: true, resolve });
    const development = createWebhookHttpClient({ timeoutMs, production: false, resolve });
    const productionDefaultDns = createWebhookHttpClient({ timeoutMs, production: true });
    const headers = { 'Content-Type': 'application/json' };
    try {
      for (const url of [
        `http://rebound.example.com:${port}/webhook`,
        hook.url(),
        `http://[::ffff:127.0.0.1]:${port}/webhook`,
      ]) {
        const outcome = await production.post(url, headers, '{}');
        assert.equal(outcome.ok, false, url);
        assert.match(!outcome.ok ? outcome.error : '', /not public/);
      }
      const viaLocalhost = await productionDefaultDns.post(`http://localhost:${port}/webhook`, headers, '{}');
      assert.equal(viaLocalhost.ok, false);
      assert.equal(hook.requests.length, 0, 'nothing reached the receiver');

      // The development default allows loopback, so that merchants can test on localhost.
      const allowed = await development.post(`http://rebound.example.com:${port}/webhook`, headers, '{}');
      assert.deepEqual(allowed.ok && [allowed.status, allowed.body], [200, 'success']);
      assert.equal(hook.requests.length, 1);
    } finally {
      await Promise.all([production.close(), development.close(), productionDefaultDns.close(), hook.close()]);
    }
  });

  test('reads at most 64 KiB of an answer, then stops; the client goes on working', async () => {
    const huge = await startReceiver(() => ({ status: 200, body: 'x'.repeat(1024 * 1024) }));
    const client = createWebhookHttpClient({ timeoutMs, production: false });
    try {
      const outcome = await client.post(huge.url(), { 'Content-Type': 'application/json' }, '{}');
      assert.ok(outcome.ok, JSON.stringify(outcome).slice(0, 200));
      assert.equal(outcome.status, 200);
      assert.equal(outcome.body.length, 64 * 1024);
      assert.equal(outcome.excerpt, 'x'.repeat(1024));
      huge.respond(() => ({ status: 200, body: 'success' }));
      const next = await client.post(huge.url(), { 'Content-Type': 'application/json' }, '{}');
      assert.deepEqual(next.ok && [next.status, next.body], [200, 'success']);
    } finally {
      await Promise.all([client.close(), huge.close()]);
    }
  });

  test('an address that is not a URL is a failed attempt, not a crash', async () => {
    const client = createWebhookHttpClient({ timeoutMs, production: false });
    try {
      const outcome = await client.post('not a url', {}, '{}');
      assert.equal(outcome.ok, false);
    } finally {
      await client.close();
    }
  });

  test('does not follow redirects and keeps the first 1 KiB of the answer', async () => {
    const target = await startReceiver();
    const redirecting = await startReceiver(() => ({
      status: 302,
      body: 'moved',
      headers: { location: target.url() },
    }));
    const long = await startReceiver(() => ({ status: 200, body: `${'é'.repeat(600)}success` }));
    const client = createWebhookHttpClient({ timeoutMs, production: false });
    try {
      const outcome = await client.post(redirecting.url(), { 'Content-Type': 'application/json' }, '{}');
      assert.deepEqual(outcome.ok && [outcome.status, outcome.excerpt], [302, 'moved']);
      assert.equal(target.requests.length, 0);
      const answer = await client.post(long.url(), { 'Content-Type': 'application/json' }, '{}');
      assert.ok(answer.ok);
      // 512 two-byte characters fill 1024 bytes exactly; no character is cut in half.
      assert.equal(answer.excerpt, 'é'.repeat(512));
    } finally {
      await Promise.all([client.close(), target.close(), redirecting.close(), long.close()]);
    }
  });
});
