import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestDatabase, databaseKind } from './helpers/harness.js';
import { startService, stopService, type RunningService } from './helpers/cli-process.js';

/** The shell block under "A first tokenized payment", exactly as the README shows it. */
function walkthrough(): string {
  const readme = readFileSync('README.md', 'utf8');
  const section = readme.slice(readme.indexOf('## A first tokenized payment'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error('README has no shell block under "A first tokenized payment"');
  return block;
}

describe(`README walkthrough (${databaseKind})`, () => {
  let folder: string;
  let database: { url: string; drop(): Promise<void> } | undefined;
  let running: RunningService;

  before(async () => {
    folder = mkdtempSync(path.join(tmpdir(), 'tessera-readme-'));
    database = databaseKind === 'postgres' ? await createTestDatabase() : undefined;
    running = await startService({
      // The block reads data/sandbox-merchant.json from where it runs, as at the repository's root.
      TESSERA_DATA_DIR: path.join(folder, 'data'),
      // The block waits 5 s for the refund to settle; a quicker sandbox keeps that true on a busy machine.
      TESSERA_SANDBOX_FOLLOW_UP_DELAY_MS: '500',
      ...(database ? { DATABASE_URL: database.url } : {}),
    });
  });
  after(async () => {
    await stopService(running);
    await database?.drop();
    rmSync(folder, { recursive: true, force: true });
  });

  function runBlock(): string {
    const result = spawnSync('bash', ['-euo', 'pipefail', '-c', walkthrough()], {
      cwd: folder,
      env: { PATH: process.env.PATH ?? '', TESSERA_URL: running.origin },
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(result.status, 0, `${result.stderr}\n${result.stdout}`);
    return result.stdout;
  }

  test('runs as written: a stored card, a MIT on it and a settled partial refund', () => {
    const objects = JSON.parse(`[${runBlock().trim().replace(/}\s*{/g, '},{')}]`) as Array<Record<string, string>>;
    assert.equal(objects.length, 3, JSON.stringify(objects));
    const [mit, refund, payment] = objects as [Record<string, string>, Record<string, string>, Record<string, string>];
    assert.match(mit.id!, /^pt_\d{19}$/);
    assert.equal(mit.status, 'succeeded');
    assert.equal(mit.subsequentInitialType, 'mit');
    assert.match(refund.id!, /^re_\d{19}$/);
    assert.equal(refund.status, 'succeeded');
    assert.equal(refund.amount, '500');
    assert.equal(payment.amountRefunded, '500');
    assert.equal(payment.displayStatus, 'partially_refunded');
  });

  test('runs again on the same service: nothing in it is fixed to one run', () => {
    assert.match(runBlock(), /"status": "succeeded"/);
  });
});
