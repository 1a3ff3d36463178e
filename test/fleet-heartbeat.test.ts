/**
 * docs/decisions/0010-process-heartbeats.md: a claim whose process died is taken over once that process's heartbeat is stale, not
 * after the whole lease: a retry after `kill -9` gets its outcome, and a killed process's webhook
 * deliveries are sent again, long before their leases (set far longer than these tests wait) end.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { databaseKind, startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';
import { startFleet, type Fleet } from './helpers/fleet.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';
import type { Running } from './helpers/cli-process.js';

const card = { cardNo: '4242424242424242', expMonth: '12', expYear: '2030', securityCode: '123' };

async function post(running: Running, merchant: TestMerchant, route: string, body: unknown, key?: string) {
  const response = await fetch(`${running.baseUrl}${route}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${merchant.privateKey}`,
      'content-type': 'application/json',
      ...(key ? { 'idempotency-key': key } : {}),
    },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as { code: string; msg: string; data: any } };
}

/**
 * Polls until `probe` answers something; gives up after `timeoutMs`: well below the leases the
 * test sets (10 min for a key, 3 min for a delivery), so that only a takeover can answer in time,
 * yet roomy enough for a machine running two suites at once (the takeover itself is ~10 s; 90 s
 * ran out once with both suites and two benchmarks on the 2 cores). `explain` adds what the
 * processes printed to the failure.
 */
async function until<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  explain: () => string = () => '',
  timeoutMs = 180_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await probe();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${explain()}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe(
  'claims of a killed process are taken over (PostgreSQL, several processes)',
  { skip: databaseKind !== 'postgres' },
  () => {
    let ctx: TestContext;
    let fleet: Fleet;
    let receiver: Receiver;
    before(async () => {
      ctx = await startTestApp();
      // Leases of ten minutes: only the heartbeat can free a claim within these tests.
      fleet = await startFleet({
        ctx,
        apiProcesses: 0,
        env: { TESSERA_IDEMPOTENCY_LEASE_MS: '600000', TESSERA_WEBHOOK_TIMEOUT_MS: '120000' },
      });
      receiver = await startReceiver();
    });
    after(async () => {
      await fleet.stop();
      await receiver.close();
      await ctx.close();
    });

    test('a retry of a request whose process was killed before answering gets the outcome from another process', async () => {
      const merchant = await ctx.merchant();
      // The first process holds every keyed answer for ten minutes after the effect: it is killed there.
      const first = await fleet.add({ TESSERA_TEST_ANSWER_DELAY_MS: '600000' });
      const second = await fleet.add();
      const method = await post(second, merchant, '/payment_methods/create', { type: 'card', card });
      const body = { amount: '2500', currency: 'USD', paymentMethod: method.body.data.id, confirm: 'true' };
      const pending = post(first, merchant, '/payment/create', body, 'fleet-kill-1').catch(() => undefined);
      const created = await until('the payment to be committed', async () => {
        const page = await merchant.call('GET', '/payment');
        return page.body.data.data.length > 0 ? page.body.data.data[0] : undefined;
      });
      // Refused while the first process lives: its claim is not taken from a live process.
      const early = await post(second, merchant, '/payment/create', body, 'fleet-kill-1');
      assert.equal(early.body.code, 'idempotency_error');
      assert.match(early.body.msg, /retry after 10 seconds/);
      await fleet.kill(first);
      assert.equal(await pending, undefined, 'the first request never got its answer');
      const retried = await until('the retry to be answered', async () => {
        const answer = await post(second, merchant, '/payment/create', body, 'fleet-kill-1');
        return answer.body.code === 'success' ? answer : undefined;
      });
      assert.equal(retried.body.data.id, created.id, 'the payment the killed process made, not a second one');
      assert.equal(retried.body.data.status, 'succeeded');
      const page = await merchant.call('GET', '/payment');
      assert.equal(page.body.data.data.length, 1);
      // Not left polling: it would claim the next test's delivery before the process meant to hold
      // it, which that test then kills in vain (the attempt waited out its 120 s timeout).
      await fleet.kill(second);
    });

    test("a killed process's delivery in flight is sent again by another process", async () => {
      const merchant = await ctx.merchant();
      // The first attempt is held unanswered: the killed process dies while it is in flight.
      receiver.respond(() => ({ status: 200, body: 'success', delayMs: 600_000 }));
      const first = await fleet.add();
      const endpoint = await post(first, merchant, '/webhook_endpoints/create', {
        url: receiver.url('/heartbeat'),
        legacyNotifications: false,
      });
      assert.equal(endpoint.body.code, 'success', JSON.stringify(endpoint.body));
      const method = await post(first, merchant, '/payment_methods/create', { type: 'card', card });
      // Counted before the payment: its first attempt may arrive before the payment's answer does.
      const inFlight = receiver.requests.length;
      const payment = await post(first, merchant, '/payment/create', {
        amount: '1999',
        currency: 'USD',
        paymentMethod: method.body.data.id,
        confirm: true,
      });
      assert.equal(payment.body.data.status, 'succeeded');
      await receiver.waitFor(inFlight + 1, 30_000);
      // Claimed before it was sent: its lease (the 120 s timeout + the 60 s margin) ends after this.
      const leaseEndsAfter = Date.now() + 180_000;
      receiver.respond(() => ({ status: 200, body: 'success' }));
      await fleet.kill(first);
      const replacement = await fleet.add();
      const again = await until(
        'the delivery to be sent again',
        async () => (receiver.requests.length > inFlight + 1 ? receiver.requests.at(-1) : undefined),
        () =>
          `; the receiver got ${receiver.requests.length - inFlight} request(s); the replacement printed:\n` +
          replacement.output().slice(-4000),
        // Sent again before the lease ran out, so by a takeover; a few seconds spare for the clocks.
        leaseEndsAfter - 5_000 - Date.now(),
      );
      assert.equal(again.path, '/heartbeat');
      assert.equal(JSON.parse(again.body).data.id, payment.body.data.id);
    });
  },
);
