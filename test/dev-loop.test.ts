import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { runCli, startService, stopService } from './helpers/cli-process.js';
import { createTestDatabase } from './helpers/harness.js';
import { migratedPgliteFolder } from './helpers/templates.js';

/** The development loop as a newcomer meets it: clear one-line refusals instead of stack traces. */
describe('tessera start refuses what cannot work with one clear line', () => {
  const folders: string[] = [];
  /** A PGlite data folder, migrated: these refusals are not about a first start (templates.ts). */
  const folder = async () => {
    const made = mkdtempSync(path.join(tmpdir(), 'tessera-devloop-'));
    folders.push(made);
    await migratedPgliteFolder(made);
    return made;
  };
  let occupied: Server;
  let busyPort: number;

  before(async () => {
    occupied = createServer();
    await new Promise<void>((resolve) => occupied.listen(0, '127.0.0.1', resolve));
    busyPort = (occupied.address() as { port: number }).port;
  });
  after(async () => {
    await new Promise((resolve) => occupied.close(resolve));
    for (const made of folders) rmSync(made, { recursive: true, force: true });
  });

  test('a port in use gives one line naming PORT, no stack trace, and opens no database first', async () => {
    // A new data folder: a start that went on would create and migrate a PGlite database in it.
    const dataDir = mkdtempSync(path.join(tmpdir(), 'tessera-devloop-'));
    folders.push(dataDir);
    const result = await runCli(['start'], {
      PORT: String(busyPort),
      TESSERA_DATA_DIR: dataDir,
      TESSERA_LOG_LEVEL: 'warn',
    });
    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.equal(
      result.stderr,
      `tessera: Port ${busyPort} is in use (127.0.0.1:${busyPort}): another process listens there. ` +
        `Stop it, or set PORT (or --port) to a free port, e.g. PORT=${busyPort + 1}\n`,
    );
    assert.deepEqual(readdirSync(dataDir), [], 'nothing made in the data folder, no lock left');
  });

  test('a database that cannot be reached is one line naming DATABASE_URL, no stack trace', async () => {
    // Nothing listens on port 1 of this machine.
    const env = {
      DATABASE_URL: 'postgres://tessera@127.0.0.1:1/tessera',
      TESSERA_MASTER_KEY: 'ab'.repeat(32),
      TESSERA_ADMIN_KEY: 'operator_devloop_key_0123456789abcdef',
      TESSERA_LOG_LEVEL: 'warn',
    };
    for (const command of ['start', 'worker', 'migrate']) {
      const result = await runCli([command], { ...env, PORT: '0', TESSERA_WORKER_HEALTH_PORT: '0' });
      assert.equal(result.code, 1, result.stdout + result.stderr);
      assert.equal(
        result.stderr,
        'tessera: DATABASE_URL cannot be connected to: connect ECONNREFUSED 127.0.0.1:1\n',
        command,
      );
    }
  });

  test('a worker whose health port is in use says so before it connects to the database', async () => {
    // Nothing listens on port 1: a worker that connected first would fail on the database instead.
    const result = await runCli(['worker'], {
      DATABASE_URL: 'postgres://tessera@127.0.0.1:1/tessera',
      TESSERA_WORKER_HEALTH_PORT: String(busyPort),
      TESSERA_MASTER_KEY: 'ab'.repeat(32),
      TESSERA_ADMIN_KEY: 'operator_devloop_key_0123456789abcdef',
      TESSERA_LOG_LEVEL: 'warn',
    });
    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.equal(
      result.stderr,
      `tessera: Port ${busyPort} is in use (127.0.0.1:${busyPort}): another process listens there. ` +
        `Stop it, or set TESSERA_WORKER_HEALTH_PORT (or --worker-health-port) to a free port, e.g. TESSERA_WORKER_HEALTH_PORT=${busyPort + 1}\n`,
    );
  });

  test('a second process on the same PGlite data folder is refused naming the first one; migrate too', async () => {
    const dataDir = await folder();
    const first = await startService({ TESSERA_DATA_DIR: dataDir });
    try {
      const lock = JSON.parse(readFileSync(path.join(dataDir, 'tessera.lock'), 'utf8'));
      assert.equal(lock.pid, first.child.pid);
      for (const args of [['start'], ['migrate']]) {
        const second = await runCli(args, { PORT: '0', TESSERA_DATA_DIR: dataDir, TESSERA_LOG_LEVEL: 'warn' });
        assert.equal(second.code, 1, second.stdout + second.stderr);
        assert.match(
          second.stderr,
          new RegExp(
            `^tessera: The data folder .* is in use by another Tessera process \\(pid ${first.child.pid} on .*\\): PGlite allows one process per folder\\..*DATABASE_URL.*\\n$`,
          ),
        );
        assert.equal(second.stderr.split('\n').length, 2);
      }
      // The first one still answers.
      const health = await fetch(`${first.origin}/health`);
      assert.equal(health.status, 200);
    } finally {
      await stopService(first);
    }
    assert.equal(existsSync(path.join(dataDir, 'tessera.lock')), false, 'released at shutdown');
  });

  test('a stale lock (its process is gone) is taken over', async () => {
    const dataDir = await folder();
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    const deadPid = Number(gone.stdout);
    writeFileSync(path.join(dataDir, 'tessera.lock'), JSON.stringify({ pid: deadPid, host: hostname() }));
    const running = await startService({ TESSERA_DATA_DIR: dataDir });
    try {
      const lock = JSON.parse(readFileSync(path.join(dataDir, 'tessera.lock'), 'utf8'));
      assert.equal(lock.pid, running.child.pid);
      assert.notEqual(lock.pid, deadPid);
    } finally {
      await stopService(running);
    }
  });
});

/** Issue 13: DATABASE_URL with both secrets in the environment needs no data folder at all. */
describe('tessera start on PostgreSQL without a data folder', { skip: !process.env.TESSERA_TEST_DATABASE_URL }, () => {
  let database: { url: string; drop(): Promise<void> };
  const scratch = mkdtempSync(path.join(tmpdir(), 'tessera-nodata-'));
  // A "folder" under a plain file can never be made: the keys cannot be copied there.
  const blocker = path.join(scratch, 'a-file');
  writeFileSync(blocker, '');
  const env = () => ({
    DATABASE_URL: database.url,
    TESSERA_MASTER_KEY: 'ab'.repeat(32),
    TESSERA_ADMIN_KEY: 'operator_nodata_key_0123456789abcdef',
  });

  before(async () => {
    database = await createTestDatabase();
  });
  after(async () => {
    await database.drop();
    rmSync(scratch, { recursive: true, force: true });
  });

  test('starts with its banner, answers, stops on SIGTERM, and keeps one sandbox merchant across starts', async () => {
    const first = await startService({ ...env(), TESSERA_DATA_DIR: path.join(blocker, 'data') });
    let firstId: string;
    try {
      assert.match(first.output(), /Storage:\s+PostgreSQL \(DATABASE_URL\)/);
      assert.match(
        first.output(),
        /Sandbox keys:\s+kept in the database; not copied to .*sandbox-merchant\.json \(ENOTDIR\)/,
      );
      firstId = /Sandbox merchant (mer_\w+)/.exec(first.output())![1]!;
      const customers = await fetch(`${first.baseUrl}/customers`, {
        headers: { authorization: `Bearer ${first.privateKey}` },
      });
      assert.equal(customers.status, 200);
    } finally {
      await stopService(first);
    }
    assert.equal(first.child.exitCode, 0, first.output());

    // A second start, now with a folder it may make: the same merchant, and its keys copied there.
    const dataDir = path.join(scratch, 'made', 'data');
    const second = await startService({ ...env(), TESSERA_DATA_DIR: dataDir });
    try {
      assert.equal(/Sandbox merchant (mer_\w+)/.exec(second.output())![1], firstId);
      assert.equal(second.privateKey, first.privateKey);
      const copied = JSON.parse(readFileSync(path.join(dataDir, 'sandbox-merchant.json'), 'utf8'));
      assert.deepEqual([copied.id, copied.privateKey], [firstId, first.privateKey]);
      const merchants = await fetch(`${second.origin}/admin/v1/merchants`, {
        headers: { authorization: 'Bearer operator_nodata_key_0123456789abcdef' },
      });
      const listed = (await merchants.json()) as { data: { data: { id: string }[] } };
      assert.deepEqual(
        listed.data.data.map((merchant) => merchant.id),
        [firstId],
      );
    } finally {
      await stopService(second);
    }
  });
});
