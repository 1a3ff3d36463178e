/**
 * docs/operations.md#topology, docs/decisions/0030: a recover's chain holds across processes. Two `tessera start`
 * processes on one PostgreSQL, each allowed eight deliveries in flight to one URL and polling every
 * 50 ms, send a recover's deliveries one at a time in the events' order: a delivery of the chain is
 * claimable by no process until the attempt of the one before it is recorded.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { databaseKind, payWithTestCard, startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';
import { startFleet, type Fleet } from './helpers/fleet.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';

describe(
  'a recover sent by two processes on one PostgreSQL',
  { skip: databaseKind === 'postgres' ? false : 'PostgreSQL only: PGlite is the database of one process' },
  () => {
    let ctx: TestContext;
    let fleet: Fleet;
    let receiver: Receiver;
    before(async () => {
      ctx = await startTestApp();
      // The processes keep real time: the test's events are made at it too.
      ctx.clock.set(new Date());
      fleet = await startFleet({ ctx, apiProcesses: 2, env: { TESSERA_WEBHOOK_POLL_INTERVAL_MS: '50' } });
      receiver = await startReceiver();
    });
    after(async () => {
      await fleet.stop();
      await receiver.close();
      await ctx.close();
    });

    /** A succeeded payment made at the current time; its payment.succeeded event's id. */
    async function pay(merchant: TestMerchant): Promise<string> {
      ctx.clock.set(new Date(Math.max(Date.now(), ctx.clock.now().getTime() + 1)));
      const payment = await payWithTestCard(merchant);
      const events = await merchant.call('GET', `/events?objectId=${payment.id}&type=payment.succeeded`);
      const [event] = events.body.data.data as Array<{ id: string }>;
      assert.ok(event, events.raw);
      return event.id;
    }

    test('the recovered events arrive one at a time, in order, whichever process sends each', async () => {
      const merchant = await ctx.merchant();
      const created = await merchant.call('POST', '/webhook_endpoints/create', {
        url: receiver.url('/recover'),
        enabledEvents: ['payment.succeeded'],
        legacyNotifications: false,
      });
      const id = created.body.data.id as string;
      const since = ctx.clock.now().toISOString();
      await merchant.call('POST', `/webhook_endpoints/${id}/update`, { status: 'disabled' });
      const missed: string[] = [];
      for (let index = 0; index < 20; index++) missed.push(await pay(merchant));
      await merchant.call('POST', `/webhook_endpoints/${id}/update`, { status: 'enabled' });
      let answering = 0;
      let most = 0;
      receiver.respond(() => {
        answering++;
        most = Math.max(most, answering);
        const over = new Promise((resolve) => setTimeout(resolve, 30)).then(() => answering--);
        return { status: 200, body: 'success', until: over };
      });

      const response = await fetch(`${fleet.apis[0]!.baseUrl}/webhook_endpoints/${id}/recover`, {
        method: 'POST',
        headers: { authorization: `Bearer ${merchant.privateKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ since }),
      });
      const recovered = (await response.json()) as { code: string; data: { deliveriesCreated: number } };
      assert.equal(recovered.data.deliveriesCreated, 20, JSON.stringify(recovered));
      await receiver.waitFor(20, 120_000);
      assert.deepEqual(
        receiver.requests.map((request) => (JSON.parse(request.body) as { id: string }).id),
        missed,
      );
      assert.equal(most, 1);
    });
  },
);
