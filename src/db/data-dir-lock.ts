import { mkdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { ConfigError } from '../config-rules.js';

/**
 * PGlite is the database of one process (docs/decisions/0002): two processes opening the same
 * data folder would each write it as if alone and corrupt it. A lock file holding the owner's pid
 * refuses the second one with a message instead. A lock left by a process that no longer exists
 * (killed, crashed — including one killed but not yet reaped, a zombie) is stale and taken over,
 * and so is one whose pid now belongs to another process image: the lock records the owner's start
 * time and the machine's boot id, so that a pid reused after a restart (in a container, the new
 * process often gets the very same pid) is not taken for the owner.
 *
 * A lock written on another host cannot be checked by its pid: a container recreated on the same
 * volume has another host name, and a folder shared over the network is seen from other machines.
 * The owner renews its lock's modification time every renewMs; a lock from another host that has
 * not been renewed for staleAfterMs is taken over, and one that is renewed while the new process
 * waits for that long is respected. So a restart in a new container right after `kill -9` waits a
 * few seconds and starts.
 */
export const lockFileName = 'tessera.lock';

/**
 * A data folder on disk, not a database in memory (no dataDir, or an address such as memory://).
 * Here rather than beside PGlite's file system (pglite-disk.ts), whose import loads PGlite: a
 * process on PostgreSQL asks this too and never loads PGlite.
 */
export function isFolderOnDisk(dataDir: string | undefined): dataDir is string {
  return dataDir !== undefined && !/^[a-z]+:\/\//.test(dataDir);
}
const renewMs = 2000;
const staleAfterMs = 8000;

interface LockOwner {
  pid: number;
  host: string;
  /** The owner's start time in clock ticks since boot (/proc/<pid>/stat), where Linux tells it. */
  started?: string;
  /** The machine's boot (/proc/sys/kernel/random/boot_id): start times of another boot mean nothing. */
  boot?: string;
}

function readProc(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** State and start time of a process from /proc/<pid>/stat (fields 3 and 22), or undefined. */
function procStat(pid: number): { state: string; started: string } | undefined {
  const stat = readProc(`/proc/${pid}/stat`);
  if (!stat) return undefined;
  // The command name (field 2) is in parentheses and may hold spaces: fields are counted after it.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0]!, started: fields[19]! };
}

const bootId = () => readProc('/proc/sys/kernel/random/boot_id');

/** Openings of each folder by this process: the same process may open a folder again (tests). */
const held = new Map<string, number>();

function exists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether the lock's owner still runs: the same process image, not a zombie, not a reused pid. */
function ownerRuns(owner: LockOwner): boolean {
  // This process is not the owner (it holds no lock on the folder): the pid was reused.
  if (owner.pid === process.pid) return false;
  if (!exists(owner.pid)) return false;
  const stat = procStat(owner.pid);
  if (!stat) return true; // No /proc (not Linux): existence is all that can be known.
  if (stat.state === 'Z' || stat.state === 'X') return false;
  if (owner.boot !== undefined && owner.boot !== bootId()) return false;
  return owner.started === undefined || owner.started === stat.started;
}

function readOwner(file: string): LockOwner | undefined {
  try {
    const owner = JSON.parse(readFileSync(file, 'utf8')) as Partial<LockOwner>;
    return typeof owner.pid === 'number' && typeof owner.host === 'string' ? (owner as LockOwner) : undefined;
  } catch {
    return undefined;
  }
}

/** When the lock file was last written or renewed (ms since the epoch); undefined when it is gone. */
function renewedAt(file: string): number | undefined {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}

/**
 * Whether a lock written on another host is stale: not renewed for staleAfterMs. A younger one is
 * watched until it would be: renewed meanwhile means its owner runs.
 */
async function otherHostLockIsStale(file: string): Promise<boolean> {
  const seen = renewedAt(file);
  if (seen === undefined || Date.now() - seen >= staleAfterMs) return true;
  await new Promise((resolve) => setTimeout(resolve, staleAfterMs - (Date.now() - seen) + 100));
  const now = renewedAt(file);
  return now === undefined || now === seen;
}

/** Takes the folder's lock, or throws naming the process that holds it; answers the release. */
export async function lockDataDir(dataDir: string): Promise<() => void> {
  const folder = path.resolve(dataDir);
  const file = path.join(folder, lockFileName);
  let renewal: NodeJS.Timeout | undefined;
  const release = () => {
    const count = (held.get(folder) ?? 1) - 1;
    if (count > 0) return void held.set(folder, count);
    held.delete(folder);
    clearInterval(renewal);
    if (readOwner(file)?.pid === process.pid) rmSync(file, { force: true });
  };
  if (held.has(folder)) {
    held.set(folder, held.get(folder)! + 1);
    return release;
  }
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  const me: LockOwner = { pid: process.pid, host: hostname(), started: procStat(process.pid)?.started, boot: bootId() };
  for (let tries = 0; tries < 3; tries++) {
    try {
      writeFileSync(file, JSON.stringify(me), { flag: 'wx', mode: 0o600 });
      held.set(folder, 1);
      renewal = setInterval(() => {
        const now = new Date();
        try {
          utimesSync(file, now, now);
        } catch {
          // Deleted by hand: nothing to renew.
        }
      }, renewMs);
      renewal.unref();
      return release;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const owner = readOwner(file);
    const stale =
      owner === undefined || (owner.host === me.host ? !ownerRuns(owner) : await otherHostLockIsStale(file));
    if (!stale) {
      throw new ConfigError(
        `The data folder ${folder} is in use by another Tessera process (pid ${owner.pid} on ${owner.host}): ` +
          'PGlite allows one process per folder. Stop that process, set another TESSERA_DATA_DIR, or use ' +
          `PostgreSQL (DATABASE_URL) for several processes. If no such process runs, delete ${file}.`,
      );
    }
    rmSync(file, { force: true });
  }
  throw new ConfigError(`Could not take the lock ${file}: other processes keep taking it`);
}
