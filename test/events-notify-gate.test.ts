/**
 * The events_notify trigger's function (migrations 0140 and 0175, decision 0033) looks for a
 * listening process unless its session says nobody can be listening: PGlite's one session sets
 * tessera.listening to off while it LISTENs on nothing and to on while a stream is open, so the
 * stream still sees every event; PostgreSQL's sessions never set it, and the function looks there
 * for every statement that records events, whichever process listens.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { openStream, waitUntil } from './helpers/event-stream.js';
import { databaseKind, payWithTestCard, startTestApp, type TestContext } from './helpers/harness.js';

const onPglite = databaseKind === 'pglite';

describe(`the events trigger and the session's listening (${databaseKind})`, () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await startTestApp();
  });
  after(async () => {
    await ctx?.close();
  });

  async function listening(): Promise<string | null> {
    const [row] = await ctx.tessera.db.query<{ value: string | null }>(
      `SELECT current_setting('tessera.listening', true) AS value`,
    );
    return row!.value;
  }

  /**
   * Records event `eventId` again with tessera_processes renamed away, in a transaction rolled back
   * either way: whether the trigger's function looked for a listening process (the look then fails).
   */
  async function looksForListeners(eventId: string, setting?: 'on'): Promise<boolean> {
    const rolledBack = new Error('rolled back');
    try {
      await ctx.tessera.db.transaction(async (tx) => {
        if (setting) await tx.query(`SET LOCAL tessera.listening = ${setting}`);
        await tx.query(`ALTER TABLE tessera_processes RENAME TO tessera_processes_away`);
        await tx.query(`CREATE TEMPORARY TABLE gate_copy ON COMMIT DROP AS SELECT * FROM events WHERE id = $1`, [
          eventId,
        ]);
        await tx.query(`DELETE FROM events WHERE id = $1`, [eventId]);
        await tx.query(`INSERT INTO events SELECT * FROM gate_copy`);
        throw rolledBack;
      });
    } catch (err) {
      if (err === rolledBack) return false;
      if (/relation "tessera_processes" does not exist/.test(String((err as Error).message))) return true;
      throw err;
    }
    throw new Error('the transaction was not rolled back');
  }

  test("PGlite's session says off while nothing listens and on while a stream is open; the stream sees the payment", async () => {
    const merchant = await ctx.merchant();
    assert.equal(await listening(), onPglite ? 'off' : null);
    const stream = await openStream(ctx, merchant.privateKey);
    try {
      assert.equal(await listening(), onPglite ? 'on' : null);
      const payment = await payWithTestCard(merchant);
      await waitUntil(() => stream.text().includes(payment.id), 10_000, 'the payment on the stream');
    } finally {
      stream.close();
    }
    const after = onPglite ? 'off' : null;
    await waitUntil(async () => (await listening()) === after, 10_000, 'the session to stop listening');
  });

  test('the trigger does not look for listeners while the setting is off, and looks where it is on or not set', async () => {
    const merchant = await ctx.merchant();
    const payment = await payWithTestCard(merchant);
    const [event] = await ctx.tessera.db.query<{ id: string }>(`SELECT id FROM events WHERE object_id = $1 LIMIT 1`, [
      payment.id,
    ]);
    assert.ok(event, 'the payment recorded an event');
    // PGlite: off, so no look; PostgreSQL: not set, so a look.
    assert.equal(await looksForListeners(event.id), !onPglite);
    assert.equal(await looksForListeners(event.id, 'on'), true);
    // Rolled back: the event is still there, once, and so is the table.
    const [kept] = await ctx.tessera.db.query<{ count: string; processes: string | null }>(
      `SELECT (SELECT count(*) FROM events WHERE id = $1)::text AS count,
              to_regclass('tessera_processes')::text AS processes`,
      [event.id],
    );
    assert.equal(kept!.count, '1');
    assert.equal(kept!.processes, 'tessera_processes');
  });
});
