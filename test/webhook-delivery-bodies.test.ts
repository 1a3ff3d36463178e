import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalJson } from '../src/events/canonical-json.js';
import { databaseKind, payWithTestCard, startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';
import { waitUntil } from './helpers/event-stream.js';
import { startReceiver, type Receiver, type ReceivedRequest } from './helpers/receiver.js';

/*
 * Migration 0180 (docs/decisions/0035-delivery-bodies-from-events.md): a delivery keeps no body of
 * its own; every attempt sends the bytes made from its event's stored body. A delivery stored by an
 * older version keeps, and sends, the bytes it was stored with. An event's body never changes.
 */

function typeOf(request: ReceivedRequest): string {
  return (JSON.parse(request.body) as { type: string }).type;
}

describe(`webhook delivery bodies made from the event (${databaseKind})`, () => {
  let ctx: TestContext;
  let hook: Receiver;

  before(async () => {
    ctx = await startTestApp({ env: { TESSERA_WEBHOOK_POLL_INTERVAL_MS: '600000' } });
    hook = await startReceiver();
  });
  after(async () => {
    await hook.close();
    await ctx.close();
  });
  afterEach(async () => {
    await ctx.tessera.webhookDispatcher.stop();
    hook.requests.length = 0;
  });

  const run = () => ctx.tessera.webhookDispatcher.runOnce();

  /** A merchant with one endpoint that hears both kinds, and a paid payment's event, not yet sent. */
  async function paidEvent(): Promise<{ merchant: TestMerchant; event: Record<string, any> }> {
    const merchant = await ctx.merchant();
    const endpoint = await merchant.call('POST', '/webhook_endpoints/create', {
      url: hook.url(),
      legacyNotifications: true,
    });
    assert.equal(endpoint.status, 200, endpoint.raw);
    // Non-ASCII and characters JSON escapes: the bytes made from the event must be the event's own.
    const payment = await payWithTestCard(merchant, { description: 'Ünïcode & "quotes" / slashes' });
    const events = await merchant.call('GET', `/events?objectId=${payment.id}`);
    return { merchant, event: events.body.data.data[0] };
  }

  async function storedBodies(eventId: string): Promise<Array<{ id: string; kind: string; body: string | null }>> {
    return ctx.tessera.db.query(`SELECT id, kind, body FROM webhook_deliveries WHERE event_id = $1 ORDER BY kind`, [
      eventId,
    ]);
  }

  test("a planned delivery stores no body, and each kind sends the event's stored bytes", async () => {
    const { event } = await paidEvent();
    const stored = await storedBodies(event.id);
    assert.deepEqual(
      stored.map((row) => [row.kind, row.body]),
      [
        ['endpoint', null],
        ['legacy', null],
      ],
    );
    assert.equal(await run(), 2);
    const byType = new Map(hook.requests.map((request) => [typeOf(request), request.body]));
    assert.equal(byType.get('payment.succeeded'), canonicalJson(event));
    assert.equal(
      byType.get('endpoint_payment.payment_succeeded'),
      canonicalJson({ ...event, type: 'endpoint_payment.payment_succeeded' }),
    );
  });

  test('a delivery stored with its own body by an older version sends those bytes, and so does its resend', async () => {
    const { merchant, event } = await paidEvent();
    const [endpointKind] = await storedBodies(event.id);
    // Its members in another order, as no version of today writes them: sent as stored, not remade.
    const older = JSON.stringify({ type: 'endpoint_payment.payment_succeeded', id: event.id, data: event.data });
    await ctx.tessera.db.query('UPDATE webhook_deliveries SET body = $1 WHERE id = $2', [older, endpointKind!.id]);

    assert.equal(await run(), 2);
    const sent = hook.requests.filter((request) => typeOf(request) === 'endpoint_payment.payment_succeeded');
    assert.deepEqual(
      sent.map((request) => request.body),
      [older],
    );

    const resent = await merchant.call('POST', `/webhook_deliveries/${endpointKind!.id}/resend`, {});
    assert.equal(resent.status, 200, resent.raw);
    const [again] = await ctx.tessera.db.query<{ body: string | null }>(
      'SELECT body FROM webhook_deliveries WHERE id = $1',
      [resent.body.data.id],
    );
    assert.equal(again!.body, older);
    assert.equal(await run(), 1);
    assert.equal(hook.requests.at(-1)!.body, older);

    // The event's resend makes its deliveries from the event again: the bytes of today's planning.
    const all = await merchant.call('POST', `/events/${event.id}/resend`, {});
    assert.equal(all.status, 200, all.raw);
    for (const delivery of all.body.data.data as Array<{ id: string }>) {
      const [row] = await ctx.tessera.db.query<{ body: string | null }>(
        'SELECT body FROM webhook_deliveries WHERE id = $1',
        [delivery.id],
      );
      assert.equal(row!.body, null);
    }
    assert.equal(await run(), 2);
    assert.deepEqual(
      hook.requests
        .slice(-2)
        .map((request) => request.body)
        .sort(),
      [canonicalJson(event), canonicalJson({ ...event, type: 'endpoint_payment.payment_succeeded' })].sort(),
    );
  });

  test('while a process of an older version runs (a rolling upgrade), new deliveries keep their bodies', async () => {
    const endpointBytes = (event: Record<string, any>) =>
      canonicalJson({ ...event, type: 'endpoint_payment.payment_succeeded' });
    /** This process's heartbeat row was written again after `since`: its beat has read the others. */
    const beatAfter = async (since: Date) => {
      const [row] = await ctx.tessera.db.query<{ after: boolean }>(
        'SELECT bool_or(heartbeat_at > $1) AS after FROM tessera_processes WHERE sends_event_bodies',
        [since],
      );
      return row?.after === true;
    };
    // The row an older version's process writes: no sends_event_bodies of its own (the default).
    const [older] = await ctx.tessera.db.query<{ started_at: Date }>(
      `INSERT INTO tessera_processes (id, kind, host, pid, heartbeat_at)
       VALUES ('proc_older_version', 'worker', 'old-host', 1, now() + interval '1 hour') RETURNING started_at`,
    );
    try {
      await waitUntil(() => beatAfter(older!.started_at), 10_000, 'a heartbeat that sees the older process');
      const { merchant, event } = await paidEvent();
      const stored = await storedBodies(event.id);
      assert.deepEqual(
        stored.map((row) => row.body),
        [endpointBytes(event), canonicalJson(event)],
      );
      const resent = await merchant.call('POST', `/events/${event.id}/resend`, {});
      assert.equal(resent.status, 200, resent.raw);
      const again = await storedBodies(event.id);
      assert.deepEqual(again.map((row) => row.body).sort(), [...stored, ...stored].map((row) => row.body).sort());
      assert.equal(await run(), 4);
    } finally {
      await ctx.tessera.db.query("DELETE FROM tessera_processes WHERE id = 'proc_older_version'");
    }
    const [gone] = await ctx.tessera.db.query<{ now: Date }>('SELECT now() AS now');
    await waitUntil(() => beatAfter(gone!.now), 10_000, 'a heartbeat after the older process left');
    const { event } = await paidEvent();
    assert.deepEqual(
      (await storedBodies(event.id)).map((row) => row.body),
      [null, null],
    );
    hook.requests.length = 0;
    assert.equal(await run(), 2);
    assert.deepEqual(
      hook.requests.map((request) => request.body).sort(),
      [canonicalJson(event), endpointBytes(event)].sort(),
    );
  });

  test("an event's body and code are never changed; its other columns may be", async () => {
    const { event } = await paidEvent();
    for (const change of ["body = body || ' '", "type = 'payment.failed'"]) {
      await assert.rejects(
        ctx.tessera.db.query(`UPDATE events SET ${change} WHERE id = $1`, [event.id]),
        (err: Error & { code?: string }) => {
          assert.equal(err.code, '23001');
          assert.match(err.message, /an event's body never changes/);
          return true;
        },
      );
    }
    // A statement that names the columns without changing them passes (as a migration's might).
    await ctx.tessera.db.query('UPDATE events SET body = body, type = type, sequence = sequence WHERE id = $1', [
      event.id,
    ]);
    const [row] = await ctx.tessera.db.query<{ body: string }>('SELECT body FROM events WHERE id = $1', [event.id]);
    assert.equal(row!.body, canonicalJson(event));
    assert.equal(await run(), 2);
  });
});
