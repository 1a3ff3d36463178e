/**
 * docs/decisions/0011-shared-rate-limits.md: the public-key rate limits (and the hosted forms' limits, on the same buckets) are counted in the database, so that several processes
 * on one PostgreSQL allow together what one allows; a limit that cannot be counted refuses the
 * request with 503 `service_unavailable` rather than letting it through.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { apiBase, databaseKind, injectRaw, startTestApp, type TestContext } from './helpers/harness.js';
import { startFleet, type Fleet } from './helpers/fleet.js';

const cardBody = {
  type: 'card',
  card: { cardNo: '4242424242424242', expMonth: '12', expYear: '2030', securityCode: '123' },
};

describe(`rate limit store unreachable (${databaseKind})`, () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await startTestApp();
  });
  after(async () => ctx.close());

  test('a public-key request is refused with 503 service_unavailable, not let through, and works again after', async () => {
    const merchant = await ctx.merchant();
    const created = await merchant.call('POST', '/payment_methods/create', cardBody);
    const read = () =>
      injectRaw(ctx, {
        method: 'GET',
        url: `${apiBase}/payment_methods/${created.body.data.id}`,
        headers: { authorization: `Bearer ${merchant.publicKey}`, origin: 'https://shop.example' },
      });
    assert.equal((await read()).statusCode, 200);
    // The buckets' table out of reach: the store answers nothing but errors.
    await ctx.tessera.db.query('ALTER TABLE rate_limit_buckets RENAME TO rate_limit_buckets_away');
    try {
      const refused = await read();
      assert.equal(refused.statusCode, 503, refused.body);
      const body = refused.json();
      assert.equal(body.code, 'service_unavailable');
      assert.match(body.msg, /rate limit cannot be checked/);
      assert.equal(refused.headers['access-control-allow-origin'], '*');
      // Private keys are not limited, and so not refused.
      assert.equal((await merchant.call('GET', `/payment_methods/${created.body.data.id}`)).status, 200);
    } finally {
      await ctx.tessera.db.query('ALTER TABLE rate_limit_buckets_away RENAME TO rate_limit_buckets');
    }
    assert.equal((await read()).statusCode, 200);
  });
});

describe('rate limits across two processes on one PostgreSQL', { skip: databaseKind !== 'postgres' }, () => {
  const perAddressPerMinute = 6;
  let ctx: TestContext;
  let fleet: Fleet;
  before(async () => {
    ctx = await startTestApp();
    fleet = await startFleet({
      ctx,
      apiProcesses: 2,
      env: { TESSERA_RATE_PER_ADDRESS_PER_MINUTE: String(perAddressPerMinute) },
    });
  });
  after(async () => {
    await fleet.stop();
    await ctx.close();
  });

  test('one address gets the limit of one process in all, not once per process', async () => {
    const merchant = await ctx.merchant();
    const created = await merchant.call('POST', '/payment_methods/create', cardBody);
    const statuses: number[] = [];
    // One at a time, alternating between the processes, as a round-robin balancer would send them.
    for (let index = 0; index < 4 * perAddressPerMinute; index++) {
      const running = fleet.apis[index % 2]!;
      const response = await fetch(`${running.baseUrl}/payment_methods/${created.body.data.id}`, {
        headers: { authorization: `Bearer ${merchant.publicKey}` },
      });
      await response.arrayBuffer();
      statuses.push(response.status);
    }
    const allowed = statuses.filter((status) => status === 200).length;
    // The bucket refills one token every 10 s: at most one more may come back while these run.
    assert.ok(allowed >= perAddressPerMinute && allowed <= perAddressPerMinute + 1, statuses.join(','));
  });

  test("one hosted checkout page's card form, posted to both processes, gets the limit of one process in all", async () => {
    const merchant = await ctx.merchant();
    const session = await merchant.call('POST', '/checkout/session/create', {
      amountTotal: '500',
      currency: 'USD',
      returnUrl: 'https://shop.example/done',
    });
    assert.equal(session.status, 200, session.raw);
    const statuses: number[] = [];
    // From a different address each time: the session's own bucket is what limits (card testing).
    for (let index = 0; index < 4 * perAddressPerMinute; index++) {
      // The hosted page's form posts to its own path on the process's origin (baseUrl is the API's).
      const origin = new URL(fleet.apis[index % 2]!.baseUrl).origin;
      const response = await fetch(`${origin}/checkout/${session.body.data.id}/pay`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': `203.0.113.${index + 1}` },
        body: new URLSearchParams({
          cardNo: '4000000000000002',
          expiry: '12/30',
          securityCode: '123',
          name: 'Card Tester',
        }).toString(),
        redirect: 'manual',
      });
      await response.arrayBuffer();
      statuses.push(response.status);
    }
    const allowed = statuses.filter((status) => status !== 429).length;
    assert.ok(allowed >= perAddressPerMinute && allowed <= perAddressPerMinute + 1, statuses.join(','));
  });
});
