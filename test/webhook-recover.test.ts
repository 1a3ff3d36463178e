import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { databaseKind } from './helpers/harness.js';
import { recoverFixture } from './helpers/recover-fixture.js';

/*
 * Recover (issue 20 item 4, docs/webhooks.md#recover): POST /webhook_endpoints/{id}/recover {since, until?}
 * sends again, oldest first, every event of the window the endpoint has not acknowledged; bad
 * windows are 400 naming the field, a disabled endpoint 409; every recover is audited.
 */

const minuteMs = 60_000;
const dayMs = 24 * 60 * minuteMs;

describe(`webhook endpoint recover (${databaseKind})`, () => {
  const fixture = recoverFixture();
  const { run, receiver, createEndpoint, pay, eventIdsOf, setStatus } = fixture;

  test('re-sends, oldest first, the events the endpoint missed (failed, or made while disabled), not those it acknowledged', async () => {
    const merchant = await fixture.ctx.merchant();
    const hook = await receiver();
    const id = await createEndpoint(merchant, hook.url());
    const since = fixture.ctx.clock.now().toISOString();

    // Acknowledged: delivered and answered success.
    const acknowledged = await pay(merchant);
    assert.equal(await run(), 1);
    // Failed: the receiver is down for its one attempt, which the schedule gives up.
    hook.respond(() => ({ status: 500, body: 'down' }));
    fixture.ctx.clock.advance(minuteMs);
    const failed = await pay(merchant);
    assert.equal(await run(), 1);
    await fixture.ctx.tessera.db.query(
      "UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL WHERE event_id = $1",
      [failed],
    );
    // Still retrying: not doubled, brought forward.
    fixture.ctx.clock.advance(minuteMs);
    const retrying = await pay(merchant);
    assert.equal(await run(), 1);
    // Made while the endpoint was disabled: never planned for it.
    await setStatus(merchant, id, 'disabled');
    fixture.ctx.clock.advance(minuteMs);
    const whileDisabled = await pay(merchant);
    fixture.ctx.clock.advance(minuteMs);
    await setStatus(merchant, id, 'enabled');
    hook.respond(() => ({ status: 200, body: 'success' }));
    const before = hook.requests.length;

    const recovered = await merchant.call('POST', `/webhook_endpoints/${id}/recover`, { since });
    assert.equal(recovered.status, 200, recovered.raw);
    assert.deepEqual(recovered.body.data, {
      endpointId: id,
      since,
      until: fixture.ctx.clock.now().toISOString(),
      events: 3,
      deliveriesCreated: 2,
      deliveriesRescheduled: 1,
    });
    assert.equal(await run(), 3);
    assert.deepEqual(eventIdsOf(hook).slice(before), [failed, retrying, whileDisabled]);
    assert.ok(!eventIdsOf(hook).slice(before).includes(acknowledged));

    // Everything is acknowledged now: a second recover sends nothing.
    const again = await merchant.call('POST', `/webhook_endpoints/${id}/recover`, { since });
    assert.equal(again.body.data.events, 0, again.raw);

    // Audited, like every webhook operation.
    const audit = await fixture.ctx.tessera.db.query<{ action: string; object_id: string }>(
      'SELECT action, object_id FROM audit_log WHERE merchant_id = $1 AND action = $2',
      [merchant.id, 'webhook_endpoint.recovered'],
    );
    assert.equal(audit.length, 2);
    assert.equal(audit[0]?.object_id, id);
  });

  test('the window ends at until and starts no earlier than the endpoint; legacy notifications are re-sent where taken', async () => {
    const merchant = await fixture.ctx.merchant();
    const hook = await receiver();
    const since = fixture.ctx.clock.now().toISOString();
    // Made before the endpoint existed: it cannot have missed it.
    await pay(merchant);
    fixture.ctx.clock.advance(minuteMs);
    const createdAt = fixture.ctx.clock.now().toISOString();
    const id = await createEndpoint(merchant, hook.url(), true);
    await setStatus(merchant, id, 'disabled');
    const inside = await pay(merchant);
    fixture.ctx.clock.advance(minuteMs);
    const until = fixture.ctx.clock.now().toISOString();
    fixture.ctx.clock.advance(minuteMs);
    await pay(merchant);
    await setStatus(merchant, id, 'enabled');

    const recovered = await merchant.call('POST', `/webhook_endpoints/${id}/recover`, { since, until });
    assert.equal(recovered.status, 200, recovered.raw);
    assert.deepEqual(
      [
        recovered.body.data.since,
        recovered.body.data.until,
        recovered.body.data.events,
        recovered.body.data.deliveriesCreated,
      ],
      [createdAt, until, 1, 2],
    );
    assert.equal(await run(), 2);
    assert.deepEqual(eventIdsOf(hook), [inside, inside]);
    // One chain over both kinds: the endpoint_ kind of an event, then its legacy kind.
    const types = hook.requests.map((request) => (JSON.parse(request.body) as { type: string }).type);
    assert.deepEqual(types, ['endpoint_payment.payment_succeeded', 'payment.succeeded']);
  });

  test('refuses since in the future or older than retention, until before since (400 naming them), a disabled endpoint (409)', async () => {
    const merchant = await fixture.ctx.merchant();
    const hook = await receiver();
    const id = await createEndpoint(merchant, hook.url());
    const now = fixture.ctx.clock.now().getTime();
    const recover = (body: unknown) => merchant.call('POST', `/webhook_endpoints/${id}/recover`, body);

    const future = await recover({ since: new Date(now + minuteMs).toISOString() });
    assert.deepEqual([future.status, future.body.code, future.body.data?.param], [400, 'invalid_request', 'since']);
    assert.match(future.body.msg, /since must not be in the future/);

    const tooOld = await recover({ since: new Date(now - 31 * dayMs).toISOString() });
    assert.deepEqual([tooOld.status, tooOld.body.data?.param], [400, 'since']);
    assert.match(tooOld.body.msg, /within the last 30 days/);

    const missing = await recover({});
    assert.equal(missing.status, 400, missing.raw);
    assert.match(missing.raw, /since/);

    const malformed = await recover({ since: 'yesterday' });
    assert.deepEqual([malformed.status, malformed.body.data?.param], [400, 'since']);

    const backwards = await recover({
      since: new Date(now - dayMs).toISOString(),
      until: new Date(now - 2 * dayMs).toISOString(),
    });
    assert.deepEqual([backwards.status, backwards.body.data?.param], [400, 'until']);

    await setStatus(merchant, id, 'disabled');
    const disabled = await recover({ since: new Date(now - dayMs).toISOString() });
    assert.deepEqual([disabled.status, disabled.body.code], [409, 'endpoint_disabled']);
    assert.match(disabled.body.msg, /enable it first/);

    const other = await fixture.ctx.merchant();
    const foreign = await other.call('POST', `/webhook_endpoints/${id}/recover`, {
      since: new Date(now - dayMs).toISOString(),
    });
    assert.equal(foreign.status, 404, foreign.raw);
  });
});
