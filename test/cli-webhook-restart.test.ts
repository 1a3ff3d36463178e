import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../src/config.js';
import { databaseKind, migratedStorage } from './helpers/harness.js';
import {
  apiCaller,
  killService,
  payWithEndpoint,
  runCli,
  startAnyService,
  stopService,
} from './helpers/cli-process.js';
import { startReceiver } from './helpers/receiver.js';
import { waitUntil } from './helpers/event-stream.js';

type Delivery = { status: string; attempts: number };

/** The event's deliveries once every one of them has `status` (polled; fails after 30 s). */
async function waitForDeliveries(call: ReturnType<typeof apiCaller>, eventId: string, status: string) {
  let deliveries: Delivery[] = [];
  await waitUntil(
    async () => {
      deliveries = (await call(`/events/${eventId}/deliveries`)).data as Delivery[];
      return deliveries.length > 0 && deliveries.every((delivery) => delivery.status === status);
    },
    30_000,
    `the deliveries of ${eventId} to be ${status}`,
  );
  return deliveries;
}

/**
 * Webhooks across processes: a service that does not send, a service killed mid-delivery, and the
 * next start on the same database. Apart from test/cli.test.ts so that the minute-long lease wait
 * runs beside the other CLI tests, not after them.
 */
describe(`tessera start and webhooks across processes (${databaseKind})`, () => {
  test('the test-only lease margin is refused in production and bounded elsewhere', () => {
    const production = { NODE_ENV: 'production', TESSERA_MASTER_KEY: 'ab'.repeat(32) };
    assert.throws(
      () => loadConfig({ ...production, TESSERA_TEST_WEBHOOK_LEASE_MARGIN_MS: '10000' }),
      /TESSERA_TEST_WEBHOOK_LEASE_MARGIN_MS is for tests/,
    );
    assert.equal(loadConfig(production).testWebhookLeaseMarginMs, undefined);
    assert.equal(loadConfig({ TESSERA_TEST_WEBHOOK_LEASE_MARGIN_MS: '10000' }).testWebhookLeaseMarginMs, 10_000);
    assert.throws(
      () => loadConfig({ TESSERA_TEST_WEBHOOK_LEASE_MARGIN_MS: '10' }),
      /TESSERA_TEST_WEBHOOK_LEASE_MARGIN_MS must be a whole number from 1000 to 60000/,
    );
  });

  test('with TESSERA_WEBHOOK_DISPATCHER=off start sends no webhook; they wait for a process with it on', async () => {
    const storage = await migratedStorage('tessera-dispatcher-');
    const switchEnv = {
      ...storage.env,
      // Polling often, so that a dispatcher that should not run would have sent by the check.
      TESSERA_WEBHOOK_POLL_INTERVAL_MS: '20',
    };
    const receiver = await startReceiver();
    try {
      const refused = await runCli(['start'], { TESSERA_WEBHOOK_DISPATCHER: 'no', TESSERA_DATA_DIR: 'memory://' });
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /TESSERA_WEBHOOK_DISPATCHER must be one of on, off/);

      const off = await startAnyService({ ...switchEnv, TESSERA_WEBHOOK_DISPATCHER: 'off' });
      let eventId: string;
      try {
        assert.match(off.output(), /TESSERA_WEBHOOK_DISPATCHER=off/);
        const call = apiCaller(off);
        // Both kinds (docs/webhooks.md#what-is-sent): legacy notifications are opt-in (docs/decisions/0014-legacy-opt-in-and-sequence.md).
        const payment = await payWithEndpoint(call, { url: receiver.url(), legacyNotifications: true });
        eventId = (await call(`/events?objectId=${payment.id}`)).data[0].id;
        const deliveries = (await call(`/events/${eventId}/deliveries`)).data as Array<{ status: string }>;
        assert.deepEqual(
          deliveries.map((delivery) => delivery.status),
          ['pending', 'pending'],
        );
      } finally {
        // Killed, not stopped: what was committed survives a crash.
        await killService(off);
      }
      // Its whole life is over (the payment, the listings: many 20 ms polls long), so this covers
      // everything it could have sent; no wait for a non-event.
      assert.equal(receiver.requests.length, 0, 'nothing is sent while the dispatcher is off');

      // The default (on): the next start on the same database sends what waited, once each.
      const on = await startAnyService(switchEnv);
      try {
        const received = await receiver.waitFor(2, 10_000);
        assert.deepEqual(new Set(received.map((request) => JSON.parse(request.body).id)), new Set([eventId]));
        const call = apiCaller(on);
        const sent = await waitForDeliveries(call, eventId, 'succeeded');
        assert.deepEqual(
          sent.map((delivery) => delivery.attempts),
          [1, 1],
          'each delivery took one attempt: the process that was off made none',
        );
      } finally {
        await stopService(on);
      }
    } finally {
      await receiver.close();
      await storage.remove();
    }
  });

  test(
    'a service killed while its webhook is in flight: the next start delivers it once the lease has run out',
    { timeout: 180_000 },
    async () => {
      const storage = await migratedStorage('tessera-killed-');
      const env = {
        ...storage.env,
        // The lease is the timeout plus a minute (engine/claimer.ts, leaseMsFor); the test-only
        // margin makes it 1 + 10 s here, so that the test waits seconds rather than a minute.
        TESSERA_WEBHOOK_TIMEOUT_MS: '1000',
        TESSERA_TEST_WEBHOOK_LEASE_MARGIN_MS: '10000',
        TESSERA_WEBHOOK_POLL_INTERVAL_MS: '200',
      };
      // The first attempt never gets an answer: the service dies while it waits.
      const receiver = await startReceiver(() => ({ status: 200, body: 'success', delayMs: 600_000 }));
      try {
        const first = await startAnyService(env);
        let eventId: string;
        let firstSentAt: number;
        let paymentMethodId: string;
        try {
          const call = apiCaller(first);
          paymentMethodId = (await payWithEndpoint(call, { url: receiver.url(), legacyNotifications: false }))
            .paymentMethod;
          const [inFlight] = await receiver.waitFor(1, 10_000);
          firstSentAt = Date.now();
          eventId = JSON.parse(inFlight!.body).id;
        } finally {
          await killService(first);
        }

        receiver.respond(() => ({ status: 200, body: 'success' }));
        const second = await startAnyService(env);
        try {
          const received = await receiver.waitFor(2, 120_000);
          assert.equal(JSON.parse(received[1]!.body).id, eventId);
          // Not before the lease of the dead process ran out (11 s after its claim, which came
          // before its attempt arrived; the lease is not a timing goal but a lower bound).
          assert.ok(Date.now() - firstSentAt! > 5_000, 'the second attempt waited for the lease');
          // Delivered once: the delivery has ended, and a later event is sent and received
          // after it with nothing for the first in between (a positive signal, not a pause).
          const call = apiCaller(second);
          const [ended] = await waitForDeliveries(call, eventId!, 'succeeded');
          // The attempt that died with its process was never recorded: the answered one is the first.
          assert.equal(ended!.attempts, 1);
          const later = await call('/payment/create', {
            amount: '500',
            currency: 'USD',
            paymentMethod: paymentMethodId!,
            confirm: true,
          });
          const laterEventId = (await call(`/events?objectId=${later.id}`)).data[0].id;
          const all = await receiver.waitFor(3, 30_000);
          assert.deepEqual(
            all.map((request) => JSON.parse(request.body).id),
            [eventId!, eventId!, laterEventId],
          );
        } finally {
          await stopService(second);
        }
      } finally {
        await receiver.close();
        await storage.remove();
      }
    },
  );
});
