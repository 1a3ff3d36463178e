import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Tessera } from '../src/composition/app.js';
import { canonicalJson } from '../src/events/canonical-json.js';
import { claimDueDeliveries, recordAttemptGroup } from '../src/webhooks/engine/queries.js';
import { leaseMsFor } from '../src/webhooks/engine/claimer.js';
import { formatRequestTime } from '../src/webhooks/signature.js';
import { databaseKind, type TestContext } from './helpers/harness.js';
import { answerSuccess, phpReencode } from './helpers/receiver.js';
import {
  deliverySuite,
  timeoutMs,
  perTargetCap,
  specRetryDelaysSeconds,
  hmac,
  header,
  signedWith,
  typeOf,
} from './helpers/webhook-delivery.js';

/**
 * Webhook delivery, continued from test/webhook-delivery.test.ts: resends, leases of workers that
 * died, per-target concurrency, and the delivery and attempt lists.
 */
describe(`webhook delivery: resends, leases, concurrency, lists (${databaseKind})`, () => {
  const suite = deliverySuite();
  const { receiver, run, advanceSeconds, createEndpoint, pay, deliveriesOf, attemptsOf, dynamicEndpointToken } = suite;
  let ctx: TestContext;
  before(() => {
    ctx = suite.ctx;
  });

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
      const second: Tessera = await ctx.secondProcess();
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
