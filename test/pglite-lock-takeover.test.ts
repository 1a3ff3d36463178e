/**
 * DESIGN §11: on PGlite, a restart right after `kill -9` is never refused by the data folder's
 * lock (src/db/data-dir-lock.ts). A lock whose process is gone, is a zombie (killed, not yet reaped
 * by its parent), or whose pid now belongs to another process image is taken over; a lock of a
 * running process is not. (test/dev-loop.test.ts starts real processes on a locked folder.)
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigError } from '../src/config-rules.js';
import { lockDataDir } from '../src/db/data-dir-lock.js';

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

function takesOver(dataDir: string) {
  const release = lockDataDir(dataDir);
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

describe('the PGlite data folder lock after a crash', () => {
  after(() => {
    for (const dataDir of folders) rmSync(dataDir, { recursive: true, force: true });
  });

  test('a lock whose pid now belongs to another process image (another start time) is taken over', () => {
    const other = sleeper();
    try {
      const dataDir = folder();
      writeLock(dataDir, { pid: other.pid, started: '1', boot: bootId() });
      takesOver(dataDir);
    } finally {
      other.kill('SIGKILL');
    }
  });

  test('a lock naming this very pid, which holds no lock (a container restarted with the same pid), is taken over', () => {
    const dataDir = folder();
    writeLock(dataDir, { pid: process.pid });
    takesOver(dataDir);
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
      takesOver(dataDir);
    } finally {
      parent.kill('SIGKILL');
    }
  });

  test('a lock of a process that is gone is taken over', () => {
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    const dataDir = folder();
    writeLock(dataDir, { pid: Number(gone.stdout) });
    takesOver(dataDir);
  });

  test('the lock of a running process (same image, same boot) is respected, naming it', () => {
    const other = sleeper();
    try {
      const dataDir = folder();
      writeLock(dataDir, { pid: other.pid, started: startOf(other.pid!), boot: bootId() });
      assert.throws(
        () => lockDataDir(dataDir),
        (err: unknown) => err instanceof ConfigError && err.message.includes(`pid ${other.pid}`),
      );
    } finally {
      other.kill('SIGKILL');
    }
  });
});
