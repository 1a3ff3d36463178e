import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestDatabase, databaseKind } from './helpers/harness.js';
import { startService, stopService, type RunningService } from './helpers/cli-process.js';

/**
 * The first shell block under a README heading, exactly as the README shows it. The section ends at
 * the next heading of any level (outside code blocks, where `#` starts a comment), so a block is
 * never taken from the section after.
 */
function blockUnder(heading: string): string {
  const lines = readFileSync('README.md', 'utf8').split('\n');
  const start = lines.indexOf(heading);
  if (start < 0) throw new Error(`README has no "${heading}" heading`);
  let block: string[] | undefined;
  let otherFence = false;
  for (const line of lines.slice(start + 1)) {
    if (block) {
      if (line === '```') return `${block.join('\n')}\n`;
      block.push(line);
    } else if (line.startsWith('```')) {
      if (line === '```sh' && !otherFence) block = [];
      else otherFence = !otherFence;
    } else if (!otherFence && /^#{1,6} /.test(line)) {
      break;
    }
  }
  throw new Error(`README has no shell block under "${heading}"`);
}

/** A TCP port nothing listens on right now, for the README's webhook receiver. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
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
    // The webhook block runs docs/examples/webhook-receiver.mjs from the repository's root, which
    // imports the SDK's build (npm start makes it; CI builds before testing).
    symlinkSync(path.resolve('docs'), path.join(folder, 'docs'));
    if (!existsSync('sdk/dist/esm/verify-webhook.js')) {
      spawnSync(process.execPath, ['scripts/sdk-build.mjs'], { stdio: 'inherit', timeout: 240_000 });
    }
  });
  after(async () => {
    await stopService(running);
    await database?.drop();
    rmSync(folder, { recursive: true, force: true });
  });

  function runBlock(heading = '## A first tokenized payment', env: Record<string, string> = {}): string {
    const result = spawnSync('bash', ['-euo', 'pipefail', '-c', blockUnder(heading)], {
      cwd: folder,
      env: { PATH: process.env.PATH ?? '', TESSERA_URL: running.origin, ...env },
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

  test('the webhook block: its receiver prints the verified payment.succeeded of the payment it made, and is stopped', async () => {
    const output = runBlock('### A webhook received and verified', { RECEIVER_PORT: String(await freePort()) });
    const lines = output
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const payment = lines.find((line) => line.status !== undefined);
    assert.equal(payment?.status, 'succeeded', output);
    assert.match(String(payment?.id), /^pt_\d{19}$/);
    const verified = lines.find((line) => line.verified === true);
    assert.equal(verified?.type, 'endpoint_payment.payment_succeeded', output);
    assert.equal(verified?.payment, payment?.id, 'the event is the payment the block made');
    assert.match(String(verified?.id), /^evt_\d{19}$/);
  });
});
