/**
 * docs/decisions/0010-process-heartbeats.md: on PGlite, a restart right after `kill -9` is never refused by the data folder's
 * lock (src/db/data-dir-lock.ts). A lock whose process is gone, is a zombie (killed, not yet reaped
 * by its parent), or whose pid now belongs to another process image is taken over; a lock of a
 * running process is not. A lock written on another host (a container recreated on the same volume)
 * is taken over once it has not been renewed for 8 s. (test/dev-loop.test.ts starts real processes
 * on a locked folder.)
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigError } from '../src/config-rules.js';
import { lockDataDir } from '../src/db/data-dir-lock.js';
import { waitUntil } from './helpers/event-stream.js';

const folders: string[] = [];
function folder(): string {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'tessera-lock-'));
  folders.push(dataDir);
  return dataDir;
}

const lockFile = (dataDir: string) => path.join(dataDir, 'tessera.lock');
const bootId = () => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
const startOf = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
};

function writeLock(dataDir: string, owner: Record<string, unknown>) {
  writeFileSync(lockFile(dataDir), JSON.stringify({ host: hostname(), ...owner }));
}

async function takesOver(dataDir: string) {
  const release = await lockDataDir(dataDir);
  try {
    assert.equal(JSON.parse(readFileSync(lockFile(dataDir), 'utf8')).pid, process.pid);
  } finally {
    release();
  }
}

/** A process that runs until killed, as a lock owner that is not this test's process. */
function sleeper() {
  return spawn('sleep', ['60'], { stdio: 'ignore' });
}

// The lock guards PGlite's data folder alone and no test here opens a database: the PostgreSQL pass
// (TESSERA_TEST_DATABASE_URL, test/helpers/harness.ts) would run the same 20 s of waiting again.
const onPostgres = process.env.TESSERA_TEST_DATABASE_URL
  ? 'the PGlite data folder lock: tested in the PGlite pass (TESSERA_TEST_DATABASE_URL is set)'
  : false;

describe('the PGlite data folder lock after a crash', { skip: onPostgres }, () => {
  after(() => {
    for (const dataDir of folders) rmSync(dataDir, { recursive: true, force: true });
  });

  test('a lock whose pid now belongs to another process image (another start time) is taken over', async () => {
    const other = sleeper();
    try {
      const dataDir = folder();
      writeLock(dataDir, { pid: other.pid, started: '1', boot: bootId() });
      await takesOver(dataDir);
    } finally {
      other.kill('SIGKILL');
    }
  });

  test('a lock naming this very pid, which holds no lock (a container restarted with the same pid), is taken over', async () => {
    const dataDir = folder();
    writeLock(dataDir, { pid: process.pid });
    await takesOver(dataDir);
  });

  test('a lock of a killed process not yet reaped (a zombie) is taken over', async () => {
    // The shell starts a child, prints its pid and becomes `sleep`, which never reaps it. The child
    // lives a second, so that it ends after the exec: a shell still running would reap it itself.
    const parent = spawn('sh', ['-c', 'sleep 1 & echo $!; exec sleep 60'], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      const zombiePid = Number(
        await new Promise<string>((resolve) =>
          parent.stdout!.once('data', (chunk: Buffer) => resolve(chunk.toString())),
        ),
      );
      for (let tries = 0; tries < 400 && !/\) Z /.test(readFileSync(`/proc/${zombiePid}/stat`, 'utf8')); tries++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.match(readFileSync(`/proc/${zombiePid}/stat`, 'utf8'), /\) Z /, 'the child is a zombie');
      const dataDir = folder();
      writeLock(dataDir, { pid: zombiePid });
      await takesOver(dataDir);
    } finally {
      parent.kill('SIGKILL');
    }
  });

  test('a lock of a process that is gone is taken over', async () => {
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    const dataDir = folder();
    writeLock(dataDir, { pid: Number(gone.stdout) });
    await takesOver(dataDir);
  });

  test('the lock of a running process (same image, same boot) is respected, naming it', async () => {
    const other = sleeper();
    try {
      const dataDir = folder();
      writeLock(dataDir, { pid: other.pid, started: startOf(other.pid!), boot: bootId() });
      await assert.rejects(
        () => lockDataDir(dataDir),
        (err: unknown) => err instanceof ConfigError && err.message.includes(`pid ${other.pid}`),
      );
    } finally {
      other.kill('SIGKILL');
    }
  });
  test('a lock from another host (a container recreated on the volume) not renewed for 8 s is taken over at once', async () => {
    const dataDir = folder();
    writeLock(dataDir, { pid: 1, host: 'a-container-that-is-gone', boot: bootId() });
    const longAgo = new Date(Date.now() - 20_000);
    utimesSync(lockFile(dataDir), longAgo, longAgo);
    const started = Date.now();
    await takesOver(dataDir);
    assert.ok(Date.now() - started < 2000, 'no wait for a lock that is stale already');
  });

  test('a fresh lock from another host is watched: taken over when it is not renewed, respected when it is', async () => {
    const dataDir = folder();
    writeLock(dataDir, { pid: 1, host: 'killed-a-moment-ago' });
    const started = Date.now();
    await takesOver(dataDir);
    assert.ok(Date.now() - started >= 7000, 'waited until the lock was 8 s old');

    const alive = folder();
    writeLock(alive, { pid: 4242, host: 'another-machine' });
    // Its owner renews it every 2 s, as a running Tessera does.
    const renewing = setInterval(() => {
      const now = new Date();
      utimesSync(lockFile(alive), now, now);
    }, 2000);
    try {
      await assert.rejects(
        () => lockDataDir(alive),
        (err: unknown) => err instanceof ConfigError && err.message.includes('pid 4242 on another-machine'),
      );
    } finally {
      clearInterval(renewing);
    }
  });

  test('a running owner renews its lock, so that other hosts see it alive', async () => {
    const dataDir = folder();
    const release = await lockDataDir(dataDir);
    try {
      const longAgo = new Date(Date.now() - 60_000);
      utimesSync(lockFile(dataDir), longAgo, longAgo);
      // The renewal is a positive signal: wait for it (a renewal is due every 2 s), not a pause.
      await waitUntil(() => Date.now() - statSync(lockFile(dataDir)).mtimeMs < 2000, 5_000, 'the lock to be renewed');
    } finally {
      release();
    }
    assert.throws(() => statSync(lockFile(dataDir)), /ENOENT/, 'released: the file is gone');
  });
});
