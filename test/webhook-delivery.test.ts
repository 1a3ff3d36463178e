import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTessera, type Tessera } from '../src/composition/app.js';
import { defaultWebhookRetryDelaysSeconds, loadConfig } from '../src/config.js';
import { canonicalJson } from '../src/events/canonical-json.js';
import { createLogger } from '../src/logger.js';
import { createWebhookHttpClient } from '../src/webhooks/http-client.js';
import { formatRequestTime } from '../src/webhooks/signature.js';
import { verifyWebhook, WebhookVerificationError } from '../sdk/verify-webhook.js';
import { databaseKind, startTestApp, type TestContext } from './helpers/harness.js';
import { refusingUrl, startReceiver, type Receiver } from './helpers/receiver.js';
import {
  deliverySuite,
  visa,
  timeoutMs,
  perTargetCap,
  specRetryDelaysSeconds,
  header,
  signedWith,
  typeOf,
} from './helpers/webhook-delivery.js';

describe(`webhook delivery (${databaseKind})`, () => {
  const suite = deliverySuite();
  const { receiver, run, advanceSeconds, createEndpoint, pay, deliveriesOf, attemptsOf, dynamicEndpointToken } = suite;
  let ctx: TestContext;
  before(() => {
    ctx = suite.ctx;
  });

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

      // The delivery of a later payment shows that the dispatcher ran after the quiet one; the
      // quiet payment's statements, had it set any going, stand before the marker.
      const merchant = await ctx.merchant();
      const hook = await receiver();
      await createEndpoint(merchant, hook.url());
      read.push('second payment');
      await pay(merchant);
      await hook.waitFor(2, 5000);
      assert.equal(
        read[0],
        'second payment',
        `a payment of a merchant without endpoints and without notifyUrl: ${read.join(', ')}`,
      );
      assert.equal(read[1], 'claim', `the dispatcher's statements: ${read.join(', ')}`);
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
