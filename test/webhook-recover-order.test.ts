import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { databaseKind, type TestMerchant } from './helpers/harness.js';
import type { Receiver } from './helpers/receiver.js';
import { recoverFixture } from './helpers/recover-fixture.js';

/*
 * Recover sends in order (docs/webhooks.md#recover, docs/decisions/0030): a recover's deliveries go one at a
 * time, in the events' order, though the endpoint's URL has eight slots in a process; a failure is
 * retried on its schedule while the rest go on; a second recover sends nothing twice; the chain
 * goes on across the pages recover reads; nothing is left waiting for a delivery that will never be
 * answered. Two processes: test/fleet-recover.test.ts.
 */

describe(`webhook endpoint recover, in order (${databaseKind})`, () => {
  const fixture = recoverFixture();
  const { run, receiver, createEndpoint, pay, eventIdsOf, setStatus } = fixture;

  /**
   * Answers success after `delayMs` and counts the requests being answered at once: with the eight
   * slots a target has in a process, a recover's deliveries would overlap if nothing ordered them.
   */
  function answerSlowly(hook: Receiver, delayMs: number, fails: (eventId: string) => boolean = () => false) {
    let answering = 0;
    let most = 0;
    hook.respond((request) => {
      answering++;
      most = Math.max(most, answering);
      const failed = fails((JSON.parse(request.body) as { id: string }).id);
      const over = new Promise((resolve) => setTimeout(resolve, delayMs)).then(() => answering--);
      return failed ? { status: 500, body: 'down', until: over } : { status: 200, body: 'success', until: over };
    });
    return { mostAtOnce: () => most };
  }

  /** `count` events one second apart (creation order is unambiguous): their ids, oldest first. */
  async function payInTurn(merchant: TestMerchant, count: number): Promise<string[]> {
    const ids: string[] = [];
    for (let index = 0; index < count; index++) {
      fixture.ctx.clock.advance(1000);
      ids.push(await pay(merchant));
    }
    return ids;
  }

  test('sends what it recovers one at a time, in the order the events were made, though eight could be in flight', async () => {
    const merchant = await fixture.ctx.merchant();
    const hook = await receiver();
    const id = await createEndpoint(merchant, hook.url());
    const since = fixture.ctx.clock.now().toISOString();
    hook.respond(() => ({ status: 500, body: 'down' }));
    const missed = await payInTurn(merchant, 20);
    assert.equal(await run(), 20);
    const slowly = answerSlowly(hook, 25);
    const before = hook.requests.length;

    const recovered = await merchant.call('POST', `/webhook_endpoints/${id}/recover`, { since });
    assert.equal(recovered.status, 200, recovered.raw);
    assert.deepEqual([recovered.body.data.events, recovered.body.data.deliveriesRescheduled], [20, 20]);
    assert.equal(await run(), 20);
    assert.deepEqual(eventIdsOf(hook).slice(before), missed);
    assert.equal(slowly.mostAtOnce(), 1);
  });

  test('a recovered delivery that fails is retried on its schedule, and the ones after it still go, in order', async () => {
    const merchant = await fixture.ctx.merchant();
    const hook = await receiver();
    const id = await createEndpoint(merchant, hook.url());
    const since = fixture.ctx.clock.now().toISOString();
    await setStatus(merchant, id, 'disabled');
    const missed = await payInTurn(merchant, 6);
    await setStatus(merchant, id, 'enabled');
    const unlucky = missed[2]!;
    let failedOnce = false;
    const slowly = answerSlowly(hook, 10, (eventId) => {
      if (eventId !== unlucky || failedOnce) return false;
      failedOnce = true;
      return true;
    });

    const recovered = await merchant.call('POST', `/webhook_endpoints/${id}/recover`, { since });
    assert.equal(recovered.body.data.deliveriesCreated, 6, recovered.raw);
    assert.equal(await run(), 6);
    assert.deepEqual(eventIdsOf(hook), missed);
    assert.equal(slowly.mostAtOnce(), 1);
    const deliveries = await merchant.call('GET', `/webhook_deliveries?endpointId=${id}&status=pending`);
    const [retrying] = deliveries.body.data.data as Array<{ eventId: string; attempts: number; nextAttemptAt: string }>;
    assert.deepEqual([deliveries.body.data.data.length, retrying?.eventId, retrying?.attempts], [1, unlucky, 1]);
    assert.ok(Date.parse(retrying!.nextAttemptAt) > fixture.ctx.clock.now().getTime(), deliveries.raw);

    // Its retry comes on the docs/webhooks.md#acknowledgement-and-retries schedule, after the others went through.
    fixture.ctx.clock.set(new Date(retrying!.nextAttemptAt));
    assert.equal(await run(), 1);
    assert.deepEqual(eventIdsOf(hook), [...missed, unlucky]);
  });

  test('a second recover while the first one is still sending sends each event once, still one at a time in order', async () => {
    const merchant = await fixture.ctx.merchant();
    const hook = await receiver();
    const id = await createEndpoint(merchant, hook.url());
    const since = fixture.ctx.clock.now().toISOString();
    await setStatus(merchant, id, 'disabled');
    const missed = await payInTurn(merchant, 8);
    await setStatus(merchant, id, 'enabled');
    // The first delivery is held by the receiver until the second recover has answered.
    let releaseFirst!: () => void;
    const firstHeld = new Promise<void>((resolve) => (releaseFirst = resolve));
    let answering = 0;
    let most = 0;
    hook.respond(() => {
      answering++;
      most = Math.max(most, answering);
      const over = (hook.requests.length === 1 ? firstHeld : new Promise((resolve) => setTimeout(resolve, 10))).then(
        () => answering--,
      );
      return { status: 200, body: 'success', until: over };
    });

    const first = await merchant.call('POST', `/webhook_endpoints/${id}/recover`, { since });
    assert.equal(first.body.data.deliveriesCreated, 8, first.raw);
    const sending = run();
    await hook.waitFor(1);
    const second = await merchant.call('POST', `/webhook_endpoints/${id}/recover`, { since });
    assert.equal(second.status, 200, second.raw);
    // Nothing is sent twice: the events still pending are chained again (the one in flight is left to its attempt).
    assert.deepEqual(
      [second.body.data.events, second.body.data.deliveriesCreated, second.body.data.deliveriesRescheduled],
      [8, 0, 7],
    );
    releaseFirst();
    await sending;
    await run();
    assert.deepEqual(eventIdsOf(hook), missed);
    assert.equal(most, 1);
  });

  test('the chain goes on across the pages a recover reads (500 events each)', async () => {
    const merchant = await fixture.ctx.merchant();
    const hook = await receiver();
    const id = await createEndpoint(merchant, hook.url());
    const since = fixture.ctx.clock.now().toISOString();
    await setStatus(merchant, id, 'disabled');
    const [model] = await payInTurn(merchant, 1);
    // 500 more events like it, a millisecond apart, written directly: paying 501 times would be slow.
    await fixture.ctx.tessera.db.query(
      `INSERT INTO events (id, merchant_id, mode, type, object_id, body, created_at, sequence, notify_url)
       SELECT 'evt_9' || lpad(g::text, 18, '0'), merchant_id, mode, type, object_id,
              replace(body, id, 'evt_9' || lpad(g::text, 18, '0')), created_at + g * interval '1 millisecond',
              sequence, notify_url
       FROM events, generate_series(1, 500) AS g WHERE id = $1`,
      [model],
    );
    fixture.ctx.clock.advance(2000);
    await setStatus(merchant, id, 'enabled');
    const recovered = await merchant.call('POST', `/webhook_endpoints/${id}/recover`, { since });
    assert.equal(recovered.body.data.deliveriesCreated, 501, recovered.raw);
    assert.equal(await run(), 501);
    const expected = [
      model,
      ...Array.from({ length: 500 }, (_, index) => `evt_9${String(index + 1).padStart(18, '0')}`),
    ];
    assert.deepEqual(eventIdsOf(hook), expected);
  });

  test('a chain to an endpoint deleted meanwhile ends its deliveries one after another, sending nothing', async () => {
    const merchant = await fixture.ctx.merchant();
    const hook = await receiver();
    const id = await createEndpoint(merchant, hook.url());
    const since = fixture.ctx.clock.now().toISOString();
    await setStatus(merchant, id, 'disabled');
    const missed = await payInTurn(merchant, 3);
    await setStatus(merchant, id, 'enabled');
    const recovered = await merchant.call('POST', `/webhook_endpoints/${id}/recover`, { since });
    assert.equal(recovered.body.data.deliveriesCreated, 3, recovered.raw);
    assert.equal((await merchant.call('DELETE', `/webhook_endpoints/${id}`)).status, 200);

    assert.equal(await run(), 3);
    assert.equal(hook.requests.length, 0);
    for (const eventId of missed) {
      const listed = await merchant.call('GET', `/events/${eventId}/deliveries`);
      const [delivery] = listed.body.data.data as Array<{ status: string; attempts: number }>;
      assert.deepEqual([delivery?.status, delivery?.attempts], ['failed', 1], listed.raw);
    }
  });

  test('a chained delivery whose predecessor is deleted, or ends without a recorded attempt, falls due after a minute', async () => {
    const merchant = await fixture.ctx.merchant();
    const hook = await receiver();
    const id = await createEndpoint(merchant, hook.url());
    const since = fixture.ctx.clock.now().toISOString();
    await setStatus(merchant, id, 'disabled');
    const missed = await payInTurn(merchant, 5);
    await setStatus(merchant, id, 'enabled');
    const recovered = await merchant.call('POST', `/webhook_endpoints/${id}/recover`, { since });
    assert.equal(recovered.body.data.deliveriesCreated, 5, recovered.raw);
    const deliveryOf = async (eventId: string) => {
      const listed = await merchant.call('GET', `/events/${eventId}/deliveries?endpointId=${id}`);
      return listed.body.data.data[0] as { id: string; status: string; nextAttemptAt: string | null };
    };
    const [first, second] = [await deliveryOf(missed[0]!), await deliveryOf(missed[1]!)];
    // Waiting for the one before it: pending, with no time of its own.
    assert.deepEqual([second.status, second.nextAttemptAt], ['pending', null]);
    assert.ok(first.nextAttemptAt);

    await fixture.ctx.tessera.db.query('DELETE FROM webhook_deliveries WHERE id = $1', [first.id]);
    await fixture.ctx.tessera.db.query(
      "UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL WHERE event_id = $1",
      [missed[2]],
    );
    // The sweep leaves chains alone for a minute (a recover may be writing one).
    await fixture.ctx.runJobs();
    assert.equal(await run(), 0);
    // Both waiting ones fall due at once; the last still follows the fourth.
    fixture.ctx.clock.advance(61_000);
    await fixture.ctx.runJobs();
    assert.equal(await run(), 3);
    const sent = eventIdsOf(hook);
    assert.deepEqual([...sent].sort(), [missed[1], missed[3], missed[4]].sort());
    assert.ok(sent.indexOf(missed[4]!) > sent.indexOf(missed[3]!), sent.join());
  });
});
