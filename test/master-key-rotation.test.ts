/**
 * `tessera vault rotate-master-key` (docs/operations.md#key-and-secret-rotation, "Master key"): through the CLI against a
 * running service, every data key and the derivation seed are re-wrapped under the new master
 * key; cards still decrypt and keep their fingerprints, clients secrets do not change, and the old
 * key alone no longer opens the vault.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { databaseKind, migratedStorage } from './helpers/harness.js';
import { runCli, startAnyService, stopService, type Running } from './helpers/cli-process.js';

const onPostgres = databaseKind === 'postgres';
const cleanups: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function call(running: Running, method: 'GET' | 'POST', route: string, body?: unknown) {
  const response = await fetch(`${running.baseUrl}${route}`, {
    method,
    headers: { authorization: `Bearer ${running.privateKey}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const parsed = (await response.json()) as any;
  assert.equal(parsed.code, 'success', `${route}: ${JSON.stringify(parsed)}`);
  return parsed.data;
}

const card = { cardNo: '4242424242424242', expMonth: '12', expYear: '2030', securityCode: '123' };

describe(`master-key rotation through the CLI (${databaseKind})`, () => {
  it('re-wraps the vault under the new key while the service runs; the old key alone is then refused', async () => {
    const oldKey = randomBytes(32).toString('hex');
    const newKey = randomBytes(32).toString('hex');
    const adminKey = `operator_${randomBytes(16).toString('hex')}`;
    const storage = await migratedStorage('tessera-master-key-');
    cleanups.push(() => storage.remove());
    const env = { ...storage.env, NODE_ENV: 'test', TESSERA_ADMIN_KEY: adminKey };
    const start = async (keys: Record<string, string>) => {
      const running = await startAnyService({ ...env, ...keys });
      cleanups.push(() => stopService(running));
      return running;
    };

    const first = await start({ TESSERA_MASTER_KEY: oldKey });
    const method = await call(first, 'POST', '/payment_methods/create', { type: 'card', card });
    const payment = await call(first, 'POST', '/payment/create', {
      amount: '1500',
      currency: 'USD',
      paymentMethod: method.id,
      confirm: true,
    });
    assert.equal(payment.status, 'succeeded');

    // Step 1: the processes run with the new key and the old one. On PostgreSQL the first process,
    // with the old key only, keeps serving meanwhile (no downtime); PGlite is one process.
    if (!onPostgres) await stopService(first);
    const second = await start({ TESSERA_MASTER_KEY: newKey, TESSERA_PREVIOUS_MASTER_KEY: oldKey });

    // Step 2: the rotation, through the CLI against the running service.
    const rotated = await runCli(['vault', 'rotate-master-key'], {
      TESSERA_URL: second.origin,
      TESSERA_ADMIN_KEY: adminKey,
    });
    assert.equal(rotated.code, 0, rotated.stderr);
    const answer = JSON.parse(rotated.stdout) as { masterKeyId: string; rewrapped: number };
    assert.match(answer.masterKeyId, /^[0-9a-f]{16}$/);
    assert.ok(answer.rewrapped >= 2, `the data key and the seed: ${rotated.stdout}`);
    const again = await runCli(['vault', 'rotate-master-key'], {
      TESSERA_URL: second.origin,
      TESSERA_ADMIN_KEY: adminKey,
    });
    assert.equal(JSON.parse(again.stdout).rewrapped, 0, 'nothing left under the old key');

    const read = await call(second, 'GET', `/payment_methods/${method.id}`);
    assert.equal(read.card.fingerprint, method.card.fingerprint);
    assert.equal((await call(second, 'GET', `/payment/${payment.id}`)).clientSecret, payment.clientSecret);
    const sameCard = await call(second, 'POST', '/payment_methods/create', { type: 'card', card });
    assert.equal(sameCard.card.fingerprint, method.card.fingerprint, 'a card keeps its fingerprint');
    if (onPostgres) {
      assert.equal(
        (await call(first, 'GET', `/payment_methods/${method.id}`)).id,
        method.id,
        'the old process serves on',
      );
      await stopService(first);
    }
    await stopService(second);

    // Step 3: the new key alone opens the vault, and a card stored under the old one still pays.
    const third = await start({ TESSERA_MASTER_KEY: newKey });
    const later = await call(third, 'POST', '/payment/create', {
      amount: '700',
      currency: 'USD',
      paymentMethod: sameCard.id,
      confirm: true,
    });
    assert.equal(later.status, 'succeeded');
    assert.equal((await call(third, 'GET', `/payment_methods/${method.id}`)).card.fingerprint, method.card.fingerprint);
    await stopService(third);

    const refused = await runCli(['start'], { ...env, PORT: '0', TESSERA_MASTER_KEY: oldKey });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /^tessera: TESSERA_MASTER_KEY does not match the key that encrypted this vault/);
    assert.equal(refused.stderr.trim().split('\n').length, 1);
  });
});
