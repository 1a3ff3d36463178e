import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
 */
export const lockFileName = 'tessera.lock';

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

/** Takes the folder's lock, or throws naming the process that holds it; answers the release. */
export function lockDataDir(dataDir: string): () => void {
  const folder = path.resolve(dataDir);
  const file = path.join(folder, lockFileName);
  const release = () => {
    const count = (held.get(folder) ?? 1) - 1;
    if (count > 0) return void held.set(folder, count);
    held.delete(folder);
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
      return release;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const owner = readOwner(file);
    // A lock from another machine (a shared folder) cannot be checked: it is respected.
    const stale = owner === undefined || (owner.host === me.host && !ownerRuns(owner));
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
