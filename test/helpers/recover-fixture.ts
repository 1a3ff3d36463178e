import { after, afterEach, before } from 'node:test';
import assert from 'node:assert/strict';
import { payWithTestCard, startTestApp, type TestContext, type TestMerchant } from './harness.js';
import { startReceiver, type Receiver } from './receiver.js';

/*
 * What the recover test files share (test/webhook-recover.test.ts, test/webhook-recover-order.test.ts):
 * one Tessera whose dispatcher runs only when a test says (runOnce), receivers closed at the end,
 * and, after each test, nothing left pending and every static endpoint disabled, so that one test's
 * deliveries and endpoints never reach the next.
 */

export interface RecoverFixture {
  /** The file's Tessera (set once `before` has run). */
  readonly ctx: TestContext;
  /** Runs the dispatcher once: answers how many attempts it made. */
  run(): Promise<number>;
  /** A receiver answering success, closed when the file ends. */
  receiver(): Promise<Receiver>;
  /** A static endpoint subscribed to payment.succeeded: answers its id. */
  createEndpoint(merchant: TestMerchant, url: string, legacyNotifications?: boolean): Promise<string>;
  /** A succeeded payment: answers its payment.succeeded event's id. */
  pay(merchant: TestMerchant): Promise<string>;
  /** The ids of the events a receiver was sent, in the order they arrived. */
  eventIdsOf(hook: Receiver): string[];
  /** Enables or disables an endpoint through the API. */
  setStatus(merchant: TestMerchant, id: string, status: 'enabled' | 'disabled'): Promise<void>;
}

/** Registers the hooks of the describe it is called in. */
export function recoverFixture(): RecoverFixture {
  let started: TestContext | undefined;
  const receivers: Receiver[] = [];
  const ctx = (): TestContext => {
    assert.ok(started, 'the Tessera of the file is started in before()');
    return started;
  };

  before(async () => {
    started = await startTestApp({ env: { TESSERA_WEBHOOK_POLL_INTERVAL_MS: '600000' } });
  });
  after(async () => {
    await Promise.all(receivers.map((receiver) => receiver.close()));
    await started?.close();
  });
  afterEach(async () => {
    await ctx().tessera.db.query(
      "UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, locked_until = NULL WHERE status = 'pending'",
    );
    await ctx().tessera.db.query("UPDATE webhook_endpoints SET status = 'disabled' WHERE kind = 'static'");
  });

  return {
    get ctx() {
      return ctx();
    },
    run: () => ctx().tessera.webhookDispatcher.runOnce(),

    async receiver() {
      const receiver = await startReceiver(() => ({ status: 200, body: 'success' }));
      receivers.push(receiver);
      return receiver;
    },

    async createEndpoint(merchant, url, legacyNotifications = false) {
      const response = await merchant.call('POST', '/webhook_endpoints/create', {
        url,
        enabledEvents: ['payment.succeeded'],
        legacyNotifications,
      });
      assert.equal(response.status, 200, response.raw);
      return response.body.data.id;
    },

    async pay(merchant) {
      const payment = await payWithTestCard(merchant);
      const events = await merchant.call('GET', `/events?objectId=${payment.id}`);
      const event = (events.body.data.data as Array<{ id: string; type: string }>).find(
        (candidate) => candidate.type === 'payment.succeeded',
      );
      assert.ok(event, events.raw);
      return event.id;
    },

    eventIdsOf: (hook) => hook.requests.map((request) => (JSON.parse(request.body) as { id: string }).id),

    async setStatus(merchant, id, status) {
      const response = await merchant.call('POST', `/webhook_endpoints/${id}/update`, { status });
      assert.equal(response.status, 200, response.raw);
    },
  };
}
