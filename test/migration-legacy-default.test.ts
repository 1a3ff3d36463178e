/**
 * docs/decisions/0014-legacy-opt-in-and-sequence.md, docs/decisions/0028: legacy notifications are opt-in for new merchants only. A
 * merchant that existed before migration 0160 and had not used notifyUrl yet (no dynamic endpoint
 * row) still gets both kinds on its first notifyUrl payment; a merchant created after gets only the
 * endpoint_ kind. The database is migrated up to just before 0160, the merchant inserted, then
 * Tessera starts on it and applies the rest.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openDb } from '../src/db/db.js';
import { knownMigrations, migrate } from '../src/db/migrate.js';
import {
  apiBase,
  createTestDatabase,
  databaseKind,
  payWithTestCard,
  startTestApp,
  type TestContext,
  type TestMerchant,
} from './helpers/harness.js';
import { startReceiver } from './helpers/receiver.js';

const migrationsDir = path.resolve('src/migrations');
const firstAfter = '0160_legacy_default_for_existing_merchants.sql';
const oldMerchantId = 'mer_before_the_opt_in';

describe(`legacy notifications of merchants older than migration 0160 (${databaseKind})`, () => {
  let ctx: TestContext;
  let dir: string;
  let drop: (() => Promise<void>) | undefined;

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'tessera-legacy-default-'));
    const older = path.join(dir, 'migrations');
    mkdirSync(older);
    const before0160 = (await knownMigrations(migrationsDir)).filter((name) => name < firstAfter);
    for (const name of before0160) copyFileSync(path.join(migrationsDir, name), path.join(older, name));
    const env: Record<string, string> = {};
    if (databaseKind === 'postgres') {
      const database = await createTestDatabase();
      drop = database.drop;
      env.DATABASE_URL = database.url;
    } else {
      env.TESSERA_DATA_DIR = path.join(dir, 'data');
    }
    const db = await openDb({ databaseUrl: env.DATABASE_URL, dataDir: env.TESSERA_DATA_DIR });
    try {
      assert.deepEqual(await migrate(db, older), before0160);
      await db.query(
        `INSERT INTO merchants (id, name, tokenization_enabled, mit_enabled, created_at, updated_at)
         VALUES ($1, 'Older merchant', true, true, now(), now())`,
        [oldMerchantId],
      );
    } finally {
      await db.close();
    }
    // Tessera applies 0160 and whatever follows it when it starts.
    ctx = await startTestApp({ env });
  });
  after(async () => {
    await ctx?.close();
    await drop?.();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The merchant's keys, rolled by the operator: the inserted row has none. */
  async function olderMerchant(): Promise<TestMerchant> {
    const rolled = await ctx.tessera.server.inject({
      method: 'POST',
      url: `/admin/v1/merchants/${oldMerchantId}/roll_keys`,
      headers: { authorization: `Bearer ${ctx.operatorKey}` },
    });
    assert.equal(rolled.statusCode, 200, rolled.body);
    const privateKey: string = JSON.parse(rolled.body).data.keys.privateKey;
    return {
      id: oldMerchantId,
      privateKey,
      publicKey: JSON.parse(rolled.body).data.keys.publicKey,
      async call(method, url, body) {
        const response = await ctx.tessera.server.inject({
          method,
          url: `${apiBase}${url}`,
          headers: { authorization: `Bearer ${privateKey}`, 'content-type': 'application/json' },
          payload: body === undefined ? undefined : JSON.stringify(body),
        });
        return {
          status: response.statusCode,
          headers: response.headers,
          body: JSON.parse(response.body),
          raw: response.body,
        };
      },
    };
  }

  /** The types the first notifyUrl payment of `merchant` sends there. */
  async function firstNotifyUrlTypes(merchant: TestMerchant): Promise<string[]> {
    const receiver = await startReceiver();
    try {
      await payWithTestCard(merchant, { notifyUrl: receiver.url('/notify') });
      const sent = await ctx.tessera.webhookDispatcher.runOnce();
      const requests = await receiver.waitFor(sent, 10_000);
      return requests.map((request) => JSON.parse(request.body).type as string).sort();
    } finally {
      await receiver.close();
    }
  }

  test('a merchant that existed before gets both kinds on its first notifyUrl payment', async () => {
    const merchant = await olderMerchant();
    assert.deepEqual(await firstNotifyUrlTypes(merchant), ['endpoint_payment.payment_succeeded', 'payment.succeeded']);
    const list = await merchant.call('GET', '/webhook_endpoints?limit=100');
    const dynamic = (list.body.data.data as Array<{ kind: string; legacyNotifications: boolean }>).find(
      (row) => row.kind === 'dynamic',
    );
    assert.equal(dynamic?.legacyNotifications, true);
  });

  test('a merchant created after gets only the endpoint_ kind', async () => {
    const merchant = await ctx.merchant();
    assert.deepEqual(await firstNotifyUrlTypes(merchant), ['endpoint_payment.payment_succeeded']);
  });
});
