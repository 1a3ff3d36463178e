/**
 * The processes and the database a benchmark run owns: each is registered with a Cleanup as soon
 * as it exists, so that success, an error, a signal or the watchdog all end the same way — every
 * child stopped, every benchmark database dropped, every temporary folder removed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { positiveInteger } from './settings.js';
import { cores, machineBusyPct } from './cpu.js';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const exitWithParent = path.join(repoRoot, 'bench', 'exit-with-parent.mjs');

// A loaded machine can take minutes to start a service on a fresh PGlite folder (initdb).
const startTimeoutMs = positiveInteger('BENCH_START_TIMEOUT_SECONDS', 60) * 1000;
const stopTimeoutMs = 20_000;

export class Cleanup {
  private readonly actions: Array<{ name: string; run: () => Promise<void> }> = [];
  private readonly children = new Set<ChildProcess>();

  /** Registers an undo action; the returned function runs it early (once) and unregisters it. */
  add(name: string, run: () => Promise<void>): () => Promise<void> {
    const action = { name, run };
    this.actions.push(action);
    return async () => {
      const index = this.actions.indexOf(action);
      if (index === -1) return;
      this.actions.splice(index, 1);
      await run();
    };
  }

  track(child: ChildProcess): void {
    this.children.add(child);
    child.once('exit', () => this.children.delete(child));
  }

  /** Runs every action, newest first; a failing action is reported and the others still run. */
  async runAll(): Promise<void> {
    while (this.actions.length > 0) {
      const action = this.actions.pop()!;
      try {
        await action.run();
      } catch (err) {
        process.stderr.write(`cleanup: ${action.name} failed: ${(err as Error).message}\n`);
      }
    }
  }

  /** Last resort from a synchronous 'exit' handler: nothing asynchronous can run any more. */
  killChildrenNow(): void {
    for (const child of this.children) child.kill('SIGKILL');
  }
}

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (!address || typeof address !== 'object') throw new Error('could not find a free port');
  return address.port;
}

export async function makeTempDir(cleanup: Cleanup, prefix: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  // BENCH_KEEP_DATA=1: the folders (a PGlite data folder among them) are left for a look afterwards.
  if (process.env.BENCH_KEEP_DATA === '1') console.error(`bench: keeping ${dir}`);
  else cleanup.add(`remove ${dir}`, () => rm(dir, { recursive: true, force: true }));
  return dir;
}

const loopbackHosts = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

/** A fresh PostgreSQL database on the server of `serverUrl`, dropped by the cleanup. */
export async function createDatabase(cleanup: Cleanup, serverUrl: string): Promise<string> {
  const url = new URL(serverUrl);
  // The benchmark only ever talks to this machine.
  if (!loopbackHosts.has(url.hostname))
    throw new Error(`BENCH_DATABASE_URL must point at 127.0.0.1, not ${url.hostname}`);
  const name = `tessera_bench_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  cleanup.add(`drop database ${name}`, async () => {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    try {
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    } finally {
      await client.end();
    }
  });
  url.pathname = `/${name}`;
  return url.toString();
}

export interface ChildServer {
  url: string;
  pid: number;
  logFile: string;
  /** SIGTERM (the server closes cleanly and a CPU profile is written), SIGKILL if it hangs. */
  stop(): Promise<void>;
}

/**
 * Starts `args` with node and waits until `healthPath` answers 200. Output goes to `logFile`;
 * its end is shown when the server does not come up.
 */
export async function startChild(
  cleanup: Cleanup,
  options: {
    name: string;
    args: string[];
    env: Record<string, string>;
    port: number;
    logFile: string;
    healthPath: string;
  },
): Promise<ChildServer> {
  const { child, running, stop } = spawnSupervised(cleanup, options);

  const url = `http://127.0.0.1:${options.port}`;
  const deadline = Date.now() + startTimeoutMs;
  for (;;) {
    if (!running()) {
      await stop();
      throw new Error(`${options.name} exited before answering:\n${await tail(options.logFile)}`);
    }
    try {
      const response = await fetch(`${url}${options.healthPath}`, { signal: AbortSignal.timeout(2000) });
      if (response.status === 200) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(
        `${options.name} did not answer within ${startTimeoutMs / 1000} s:\n${await tail(options.logFile)}`,
      );
    }
    await sleep(100);
  }
  return { url, pid: child.pid!, logFile: options.logFile, stop };
}

/**
 * Spawns `args` with node (it exits with this process), its output appended to `logFile` (and
 * standard output also given to `onStdout`), and registers with the cleanup a stop: SIGTERM, then
 * SIGKILL if it has not ended within stopTimeoutMs.
 */
function spawnSupervised(
  cleanup: Cleanup,
  options: { name: string; args: string[]; env: Record<string, string>; logFile: string },
  onStdout?: (chunk: Buffer) => void,
) {
  const log = createWriteStream(options.logFile, { flags: 'a' });
  const child = spawn(process.execPath, ['--import', exitWithParent, ...options.args], {
    cwd: repoRoot,
    env: options.env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  cleanup.track(child);
  child.stdout!.on('data', (chunk: Buffer) => {
    onStdout?.(chunk);
    log.write(chunk);
  });
  child.stderr!.pipe(log, { end: false });
  let isRunning = true;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  void exited.then(() => {
    isRunning = false;
  });
  const stop = cleanup.add(`stop ${options.name}`, async () => {
    if (isRunning) {
      child.kill('SIGTERM');
      const stopped = await Promise.race([exited.then(() => true), sleep(stopTimeoutMs).then(() => false)]);
      if (!stopped) {
        process.stderr.write(`${options.name} did not stop within ${stopTimeoutMs / 1000} s; killing it\n`);
        child.kill('SIGKILL');
        await exited;
      }
    }
    child.stdin!.destroy();
    await new Promise<void>((resolve) => log.end(resolve));
  });
  return { child, exited, stop, running: () => isRunning };
}

export async function tail(file: string, lines = 30): Promise<string> {
  try {
    return (await readFile(file, 'utf8')).trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no output)';
  }
}

/** The environment a child gets: the parent's, minus every setting of the service, plus `extra`. */
export function childEnv(extra: Record<string, string | undefined>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value === undefined) continue;
    if (name.startsWith('TESSERA_') || name.startsWith('BENCH_')) continue;
    if (['DATABASE_URL', 'PORT', 'HOST', 'NODE_ENV', 'NODE_OPTIONS'].includes(name)) continue;
    env[name] = value;
  }
  for (const [name, value] of Object.entries(extra)) if (value !== undefined) env[name] = value;
  return env;
}

export interface ChildProcessHandle {
  pid: number;
  logFile: string;
  /** Resolves with the exit code when the process ends by itself or is stopped. */
  exited: Promise<number | null>;
  /** SIGTERM, SIGKILL if it hangs; registered with the cleanup like startChild's. */
  stop(): Promise<void>;
}

/**
 * Starts `args` with node for a process that serves no HTTP (a `tessera worker`, a load sender)
 * and waits until its standard output matches `readyWhen`, when given. Standard output is kept
 * in memory (`output()`) as well as in `logFile`.
 */
export async function startProcess(
  cleanup: Cleanup,
  options: { name: string; args: string[]; env: Record<string, string>; logFile: string; readyWhen?: RegExp },
): Promise<ChildProcessHandle & { output(): string; write(text: string): void }> {
  let stdout = '';
  const { child, running, exited, stop } = spawnSupervised(cleanup, options, (chunk) => {
    stdout += chunk.toString();
  });
  if (options.readyWhen) {
    const deadline = Date.now() + startTimeoutMs;
    while (!options.readyWhen.test(stdout)) {
      if (!running() || Date.now() > deadline) {
        await stop();
        throw new Error(`${options.name} did not get ready:\n${await tail(options.logFile)}`);
      }
      await sleep(20);
    }
  }
  return {
    pid: child.pid!,
    logFile: options.logFile,
    exited,
    stop,
    output: () => stdout,
    write: (text) => void child.stdin!.write(text),
  };
}

/**
 * The frame of a benchmark's main: prints its title (and a warning when the machine is already
 * busy, since the figures then understate), runs `work`, and always stops the child processes and
 * drops the databases — at the end, after an error, on Ctrl-C or SIGTERM, and when the watchdog
 * (`timeoutS`) fires. `work` gets the cleanup and the lines printed so far, to add its own.
 */
export function runBenchmark(
  options: { title: string; timeoutS: number; busyHint?: string },
  work: (cleanup: Cleanup, lines: string[]) => Promise<void>,
): void {
  const cleanup = new Cleanup();
  let cleaning: Promise<void> | null = null;
  const cleanUp = () => (cleaning ??= cleanup.runAll());
  const abort = (reason: string, code: number) => {
    process.stderr.write(`\nbench: ${reason}; stopping processes and dropping databases\n`);
    void cleanUp().finally(() => process.exit(code));
  };
  process.once('SIGINT', () => abort('interrupted', 130));
  process.once('SIGTERM', () => abort('terminated', 143));
  process.once('exit', () => cleanup.killChildrenNow());
  const watchdog = setTimeout(
    () => abort(`still running after ${options.timeoutS} s (BENCH_TIMEOUT_SECONDS)`, 1),
    options.timeoutS * 1000,
  );
  watchdog.unref();

  const run = async () => {
    const lines = [options.title];
    process.stderr.write(`${options.title}\n`);
    const idleBusy = await machineBusyPct(1000);
    if (idleBusy !== null && idleBusy > 15) {
      const warning =
        `WARNING: the machine was ${Math.round(idleBusy)}% busy (of ${cores * 100}%) before the benchmark started` +
        (options.busyHint ?? '');
      lines.push(warning);
      process.stderr.write(`${warning}\n`);
    }
    try {
      await work(cleanup, lines);
    } finally {
      clearTimeout(watchdog);
      await cleanUp();
    }
  };
  run().catch((err: unknown) => {
    process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exitCode = 1;
  });
}
