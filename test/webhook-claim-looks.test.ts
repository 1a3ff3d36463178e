/**
 * How the dispatcher looks for due deliveries of any target behind large backlogs (issue 19, the
 * webhook drain): a look takes from each target once and then looks past the targets it has taken
 * from, leaving their backlogs to the cheap per-target refill. Before, a look behind a few targets'
 * backlogs claimed again and again what their slots had freed, each time reading past the same rows
 * (in a drain of 8 targets, looks of 15,000 rows for nothing, 27 ms each on PostgreSQL).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { databaseKind, payWithTestCard, startTestApp, type TestContext } from './helpers/harness.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';

describe(`webhook claims behind backlogs (${databaseKind})`, () => {
  let ctx: TestContext;
  const receivers: Receiver[] = [];

  before(async () => {
    ctx = await startTestApp({
      env: {
        // A target holds 12 deliveries at most (3 × its cap of 4); a claim of any target takes up to
        // 100 and reads 4 due rows for each (a window of 400).
        TESSERA_WEBHOOK_CONCURRENCY_PER_TARGET: '4',
        TESSERA_WEBHOOK_POLL_INTERVAL_MS: '25',
      },
    });
  });
  after(async () => {
    await Promise.all(receivers.map((receiver) => receiver.close()));
    await ctx.close();
  });

  test('a drain of two targets with more due than a look reads: each look takes from each target once, refills do the rest', async () => {
    const merchant = await ctx.merchant();
    for (let index = 0; index < 2; index++) {
      const receiver = await startReceiver();
      receivers.push(receiver);
      const endpoint = await merchant.call('POST', '/webhook_endpoints/create', {
        url: receiver.url(`/hooks/${index}`),
        legacyNotifications: true,
      });
      assert.equal(endpoint.status, 200, endpoint.raw);
    }
    // 150 payments: 300 deliveries a target (the endpoint kind and the legacy one), more than a window.
    for (let index = 0; index < 150; index++) await payWithTestCard(merchant);

    const db = ctx.tessera.db;
    const original = db.query;
    // Each look (whether anything is due) and each claim of any target in it: the targets it was
    // told to look past (its third parameter) and those it took rows of.
    const looks: Array<Array<{ pastTargets: string[]; took: string[] }>> = [];
    let refills = 0;
    db.query = (async (sql: string, params?: readonly unknown[]) => {
      if (/^SELECT EXISTS \(SELECT 1 FROM webhook_deliveries/.test(sql)) looks.push([]);
      if (/^WITH picked/.test(sql)) refills++;
      if (!/^WITH candidates/.test(sql)) return original(sql, params);
      // As slow as behind a large backlog: attempts under way end, and free their slots, meanwhile.
      await new Promise((resolve) => setTimeout(resolve, 50));
      const rows = await original(sql, params);
      const took = [
        ...new Set(
          (rows as Array<{ target: string | null }>).flatMap((row) => (row.target === null ? [] : [row.target])),
        ),
      ];
      looks.at(-1)?.push({ pastTargets: [...((params?.[2] as string[] | undefined) ?? [])], took });
      return rows;
    }) as typeof db.query;
    try {
      ctx.tessera.webhookDispatcher.start();
      await Promise.all(receivers.map((receiver) => receiver.waitFor(300, 60_000)));
      await ctx.tessera.webhookDispatcher.stop();
    } finally {
      db.query = original;
    }
    for (const receiver of receivers) assert.equal(receiver.requests.length, 300);
    // Within a look, each claim after the first looks past every target the claims before it took.
    const claims = looks.flat().length;
    for (const look of looks) {
      look.forEach((claim, index) => {
        const takenBefore = look.slice(0, index).flatMap((earlier) => earlier.took);
        const again = takenBefore.filter((target) => !claim.pastTargets.includes(target));
        assert.deepEqual(again, [], `a look claimed again from a target it had taken from: ${JSON.stringify(looks)}`);
      });
    }
    assert.ok(claims > 0 && refills > 0, `${claims} claims of any target, ${refills} refills`);
  });
});
