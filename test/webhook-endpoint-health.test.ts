import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { newId } from '../src/ids.js';
import { recordAttemptGroup, type AttemptRecord } from '../src/webhooks/engine/queries.js';
import { databaseKind, payWithTestCard, startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';
import { mailText, startSmtpServer, type ReceivedMail, type SmtpTestServer } from './helpers/smtp.js';

/*
 * Endpoint health (issue 20 item 3, docs/webhooks.md#endpoint-health): health, failingSince, lastError, nextAttemptAt
 * through the API; the e-mails to Owners, Administrators and Developers after an hour of failures
 * and daily after; disabled after five days of nothing but failures, and at once on HTTP 410. The
 * test clock is moved forward; the e-mails cross a real SMTP session.
 */

const hourMs = 60 * 60 * 1000;
const dayMs = 24 * hourMs;

describe(`webhook endpoint health (${databaseKind})`, () => {
  let ctx: TestContext;
  let smtp: SmtpTestServer;
  const receivers: Receiver[] = [];

  before(async () => {
    smtp = await startSmtpServer();
    ctx = await startTestApp({
      env: { TESSERA_SMTP_URL: smtp.url, TESSERA_WEBHOOK_POLL_INTERVAL_MS: '600000' },
    });
  });
  after(async () => {
    await Promise.all(receivers.map((receiver) => receiver.close()));
    await ctx.close();
    await smtp.close();
  });
  // Each test's deliveries end with it, so that a later test's runs never send them again.
  afterEach(async () => {
    await ctx.tessera.db.query(
      "UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, locked_until = NULL WHERE status = 'pending'",
    );
    await ctx.tessera.db.query("UPDATE webhook_endpoints SET status = 'disabled' WHERE kind = 'static'");
  });

  const run = () => ctx.tessera.webhookDispatcher.runOnce();

  async function receiver(status: number, body: string): Promise<Receiver> {
    const started = await startReceiver(() => ({ status, body }));
    receivers.push(started);
    return started;
  }

  async function createEndpoint(merchant: TestMerchant, url: string): Promise<string> {
    const response = await merchant.call('POST', '/webhook_endpoints/create', {
      url,
      enabledEvents: ['payment.succeeded'],
      legacyNotifications: false,
    });
    assert.equal(response.status, 200, response.raw);
    assert.equal(response.body.data.health, 'healthy');
    return response.body.data.id;
  }

  async function endpoint(merchant: TestMerchant, id: string) {
    const response = await merchant.call('GET', `/webhook_endpoints/${id}`);
    assert.equal(response.status, 200, response.raw);
    return response.body.data as Record<string, any>;
  }

  /** A merchant with a member of every role, each with its own address. */
  async function merchantWithTeam(): Promise<{ merchant: TestMerchant; addresses: Record<string, string> }> {
    const merchant = await ctx.merchant();
    const tag = merchant.id.slice(-8);
    const addresses = {
      owner: `owner-${tag}@shop.example`,
      administrator: `admin-${tag}@shop.example`,
      developer: `dev-${tag}@shop.example`,
      analyst: `analyst-${tag}@shop.example`,
      support: `support-${tag}@shop.example`,
    };
    const { memberId } = await ctx.tessera.db.transaction((tx) =>
      ctx.tessera.team.createOwner(tx, merchant.id, addresses.owner),
    );
    const actor = {
      merchantId: merchant.id,
      memberId,
      role: 'owner' as const,
      mode: 'test' as const,
      clientAddress: '127.0.0.1',
    };
    for (const role of ['administrator', 'developer', 'analyst', 'support'] as const) {
      await ctx.tessera.team.invite(actor, { email: addresses[role], name: role, role });
    }
    return { merchant, addresses };
  }

  /** The health e-mails received since `from` (invitations left out). */
  function healthMails(from: number): ReceivedMail[] {
    return smtp.messages.slice(from).filter((mail) => /Subject: Webhook endpoint/.test(mail.raw));
  }

  test('a failing endpoint shows failing, since when, why and the next attempt; a success makes it healthy', async () => {
    const merchant = await ctx.merchant();
    const hook = await receiver(500, 'oops');
    const id = await createEndpoint(merchant, hook.url());
    const startedAt = ctx.clock.now().toISOString();
    await payWithTestCard(merchant);
    assert.equal(await run(), 1);

    const failing = await endpoint(merchant, id);
    assert.equal(failing.status, 'enabled');
    assert.equal(failing.health, 'failing');
    assert.equal(failing.failingSince, startedAt);
    assert.equal(failing.lastError, 'The endpoint answered HTTP 500, not 2xx');
    // docs/webhooks.md#acknowledgement-and-retries: the first follow-up 30 s after the attempt.
    assert.equal(failing.nextAttemptAt, new Date(Date.parse(startedAt) + 30_000).toISOString());
    const listed = await merchant.call('GET', '/webhook_endpoints?limit=100');
    const inList = (listed.body.data.data as Array<Record<string, any>>).find((row) => row.id === id);
    assert.deepEqual(
      [inList?.health, inList?.failingSince, inList?.lastError],
      ['failing', startedAt, failing.lastError],
    );

    // A second failure keeps failingSince where the failures began.
    ctx.clock.advance(30_000);
    assert.equal(await run(), 1);
    assert.equal((await endpoint(merchant, id)).failingSince, startedAt);

    hook.respond(() => ({ status: 200, body: 'success' }));
    ctx.clock.advance(60_000);
    assert.equal(await run(), 1);
    const healthy = await endpoint(merchant, id);
    assert.deepEqual(
      [healthy.health, healthy.failingSince, healthy.lastError, healthy.nextAttemptAt],
      ['healthy', null, null, null],
    );
  });

  test('Owners, Administrators and Developers are e-mailed after an hour of failures, then daily; Analysts and Support are not', async () => {
    const { merchant, addresses } = await merchantWithTeam();
    const hook = await receiver(503, 'down');
    const id = await createEndpoint(merchant, hook.url());
    const before = smtp.messages.length;
    await payWithTestCard(merchant);
    assert.equal(await run(), 1);

    ctx.clock.advance(hourMs - 1000);
    await ctx.runJobs();
    assert.equal(healthMails(before).length, 0, 'not before an hour');

    // The sweep runs every minute: the alert goes out within a minute of the hour.
    ctx.clock.advance(60_000);
    await ctx.runJobs();
    const alerts = await waitForHealthMails(before, 3);
    assert.deepEqual(
      alerts.flatMap((mail) => mail.to).sort(),
      [addresses.administrator, addresses.developer, addresses.owner].sort(),
    );
    const text = mailText(alerts[0]!.raw);
    assert.match(alerts[0]!.raw, /Subject: Webhook endpoint failing/);
    assert.match(text, new RegExp(id));
    assert.match(text, /The endpoint answered HTTP 503, not 2xx/);

    // Not again within the day, whichever process sweeps.
    ctx.clock.advance(hourMs);
    await Promise.all([ctx.runJobs(), ctx.tessera.endpointHealth.sweep()]);
    await ctx.runJobs();
    assert.equal(healthMails(before).length, 3);

    ctx.clock.advance(dayMs);
    await ctx.runJobs();
    assert.equal((await waitForHealthMails(before, 6)).length, 6, 'once a day after');
  });

  test('five days of nothing but failures disable the endpoint, with an e-mail; re-enabling starts it healthy', async () => {
    const { merchant, addresses } = await merchantWithTeam();
    const hook = await receiver(500, 'oops');
    const id = await createEndpoint(merchant, hook.url());
    await payWithTestCard(merchant);
    assert.equal(await run(), 1);
    const before = smtp.messages.length;

    ctx.clock.advance(5 * dayMs - 60_000);
    await ctx.runJobs();
    assert.equal((await endpoint(merchant, id)).status, 'enabled');

    ctx.clock.advance(60_000);
    await ctx.runJobs();
    const disabled = await endpoint(merchant, id);
    assert.deepEqual(
      [disabled.status, disabled.health, disabled.disabledReason, disabled.nextAttemptAt],
      ['disabled', 'disabled', 'failing', null],
    );
    const mails = (await waitForHealthMails(before, 3)).filter((mail) =>
      /Subject: Webhook endpoint disabled/.test(mail.raw),
    );
    assert.deepEqual(
      mails.flatMap((mail) => mail.to).sort(),
      [addresses.administrator, addresses.developer, addresses.owner].sort(),
    );
    assert.match(mailText(mails[0]!.raw), /recover/);

    const enabled = await merchant.call('POST', `/webhook_endpoints/${id}/update`, { status: 'enabled' });
    assert.equal(enabled.status, 200, enabled.raw);
    assert.deepEqual(
      [
        enabled.body.data.health,
        enabled.body.data.failingSince,
        enabled.body.data.lastError,
        enabled.body.data.disabledReason,
      ],
      ['healthy', null, null, null],
    );
  });

  test('HTTP 410 Gone disables a static endpoint at once, with an e-mail', async () => {
    const { merchant } = await merchantWithTeam();
    const hook = await receiver(410, 'gone');
    const id = await createEndpoint(merchant, hook.url());
    const before = smtp.messages.length;
    await payWithTestCard(merchant);
    assert.equal(await run(), 1);
    const gone = await endpoint(merchant, id);
    assert.deepEqual([gone.status, gone.health, gone.disabledReason], ['disabled', 'disabled', 'gone']);
    await ctx.runJobs();
    const mails = await waitForHealthMails(before, 3);
    assert.match(mailText(mails[0]!.raw), /410 Gone/);
    // Nothing more is sent to it.
    ctx.clock.advance(60_000);
    await run();
    assert.equal(hook.requests.length, 1);
  });

  test('attempts recorded at once by several workers, in any order, keep health consistent and never deadlock', async () => {
    const merchant = await ctx.merchant();
    const hook = await receiver(200, 'success');
    const first = await createEndpoint(merchant, hook.url('/a'));
    const second = await createEndpoint(merchant, hook.url('/b'));
    await payWithTestCard(merchant);
    const at = ctx.clock.now();
    // Deliveries to record against: one per endpoint per worker, leased as a claim leaves them.
    const leaseUntil = new Date(at.getTime() + 120_000);
    const deliveries: Array<{ id: string; endpointId: string }> = [];
    for (let worker = 0; worker < 8; worker++) {
      for (const endpointId of worker % 2 === 0 ? [first, second] : [second, first]) {
        const id = newId('wd');
        await ctx.tessera.db.query(
          `INSERT INTO webhook_deliveries (id, event_id, merchant_id, mode, endpoint_id, url, kind, body, status, attempts,
             next_attempt_at, locked_until, created_at, updated_at)
           SELECT $1, id, merchant_id, mode, $2, 'http://127.0.0.1/', 'endpoint', '{}', 'pending', 0, $3, $4, $3, $3
           FROM events WHERE merchant_id = $5 LIMIT 1`,
          [id, endpointId, at, leaseUntil, merchant.id],
        );
        deliveries.push({ id, endpointId });
      }
    }
    assert.equal(deliveries.length, 16);
    const record = (
      delivery: { id: string; endpointId: string },
      succeeded: boolean,
      offsetMs: number,
    ): AttemptRecord => ({
      deliveryId: delivery.id,
      leaseUntil,
      attemptId: newId('wa'),
      attemptNumber: 1,
      attemptedAt: new Date(at.getTime() + offsetMs),
      durationMs: 1,
      httpStatus: succeeded ? 200 : 500,
      responseExcerpt: null,
      error: succeeded ? null : 'The endpoint answered HTTP 500, not 2xx',
      succeeded,
      status: succeeded ? 'succeeded' : 'pending',
      nextAttemptAt: succeeded ? null : new Date(at.getTime() + 60_000),
      url: 'http://127.0.0.1/',
      now: at,
      endpointId: delivery.endpointId,
      countsForHealth: true,
    });
    // Eight groups at once, each touching both endpoints in its own order: failures first, and
    // the newest attempt of each endpoint a success.
    const groups = [0, 1, 2, 3, 4, 5, 6, 7].map((worker) =>
      deliveries.slice(worker * 2, worker * 2 + 2).map((delivery) => record(delivery, worker === 7, worker * 1000)),
    );
    const recorded = await Promise.all(
      groups.map(async (group) => (await recordAttemptGroup(ctx.tessera.db, group)).recorded),
    );
    assert.equal(
      recorded.reduce((total, ids) => total + ids.size, 0),
      16,
    );
    for (const id of [first, second]) {
      const row = await endpoint(merchant, id);
      // The newest attempt (worker 7's) succeeded: healthy, whichever group committed last.
      assert.equal(row.health, 'healthy', `${id}: ${JSON.stringify(row)}`);
    }
  });

  async function waitForHealthMails(from: number, count: number): Promise<ReceivedMail[]> {
    for (let tries = 0; tries < 100; tries++) {
      const mails = healthMails(from);
      if (mails.length >= count) return mails;
      await ctx.runJobs();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.fail(`expected ${count} health e-mails, received ${healthMails(from).length}`);
  }
});
