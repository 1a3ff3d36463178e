/**
 * `tessera` as a process, for tests of the command line against a started service: start it on a
 * free port and read what it prints, run a command and collect its output and exit code.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { stale } from '../../scripts/stale.mjs';

/**
 * The compiled CLI when dist/ is up to date with src/ (CI builds before it tests), which starts
 * in a third of the CPU time; otherwise the sources through tsx, so that a test never runs code
 * older than what it reads. The same inputs as scripts/build.mjs's staleness check.
 */
const compiledIsCurrent = !stale(
  'dist/.build-stamp',
  'src',
  'tsconfig.json',
  'tsconfig.build.json',
  'package-lock.json',
);
/**
 * A spawned service lives seconds: PGlite's WebAssembly is compiled by V8's baseline compiler only
 * (Liftoff), as in the test processes themselves (`npm test`), since optimizing its hot functions in
 * the background costs such a process more CPU than it saves (docs/performance.md#test-suite-time). The service run by users keeps V8's defaults.
 */
const cliArgs = ['--liftoff-only', ...(compiledIsCurrent ? [compiledCli()] : ['--import', 'tsx', 'src/cli/index.ts'])];

/**
 * dist/'s CLI as the test build bundled it (.test-dist/tessera/, scripts/test-build.mjs: a start
 * loads a few files instead of some 1,250 modules) when that bundle is newer than dist/, as in
 * `npm test`; dist/cli/index.js itself otherwise (a test file run from its sources after a build).
 */
function compiledCli(): string {
  const bundled = '.test-dist/tessera/index.js';
  return existsSync(bundled) && !stale('.test-dist/.build-stamp', 'dist/.build-stamp') ? bundled : 'dist/cli/index.js';
}

export interface RunningService extends Running {
  /** The sandbox merchant's private key as printed. */
  privateKey: string;
}

/** A development start: its banner has the sandbox merchant's key. `nodeArgs` go to node before the CLI. */
export async function startService(
  env: Record<string, string>,
  nodeArgs: readonly string[] = [],
): Promise<RunningService> {
  const running = await startAnyService(env, undefined, nodeArgs);
  if (running.privateKey === undefined || !running.output().includes('Try it:')) {
    running.child.kill('SIGKILL');
    throw new Error(`no sandbox key in: ${running.output()}`);
  }
  return { ...running, privateKey: running.privateKey };
}

export async function stopService(running: Running): Promise<void> {
  if (running.child.exitCode !== null) return;
  const exited = new Promise((resolve) => running.child.once('exit', resolve));
  running.child.kill('SIGTERM');
  await exited;
}

/** `input`, when given, is written to the command's stdin (which is closed otherwise). */
export function runCli(
  args: string[],
  env: Record<string, string>,
  input?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...cliArgs, ...args], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    if (input !== undefined) child.stdin!.end(input);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/** Calls the merchant API of a started service with its sandbox key: GET without a body, POST with one. */
export function apiCaller(running: Running) {
  return async (route: string, body?: unknown): Promise<any> => {
    const response = await fetch(`${running.baseUrl}${route}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${running.privateKey}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const parsed = (await response.json()) as { code: string; msg: string; data: any };
    if (parsed.code !== 'success') throw new Error(`${route}: ${JSON.stringify(parsed)}`);
    return parsed.data;
  };
}

export interface LongRunningCli {
  child: ChildProcess;
  output: () => string;
  /** Waits until the output (stdout and stderr) matches, or throws with what was printed. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  stop(): Promise<number | null>;
}

/** A command that keeps running (`tessera listen`, `tessera deliveries tail`), read while it runs. */
export function spawnCli(args: string[], env: Record<string, string>): LongRunningCli {
  const child = spawn(process.execPath, [...cliArgs, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    output: () => output,
    async waitFor(pattern, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const match = pattern.exec(output);
        if (match) return match;
        if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode} before ${pattern}: ${output}`);
        if (Date.now() > deadline) throw new Error(`no ${pattern} in time: ${output}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async stop() {
      if (child.exitCode === null) child.kill('SIGINT');
      return exited;
    },
  };
}

export interface Running {
  child: ChildProcess;
  output: () => string;
  baseUrl: string;
  origin: string;
  privateKey: string | undefined;
}

/** Runs `tessera start` as a newcomer would and reads what it prints (in production: no sandbox key). */
export async function startAnyService(
  env: Record<string, string>,
  startupTimeoutMs = 120_000,
  nodeArgs: readonly string[] = [],
): Promise<Running> {
  const child = spawn(process.execPath, [...nodeArgs, ...cliArgs, 'start'], {
    // No load balancer waits for its readiness to turn: SIGTERM stops it at once (by default it
    // serves 2 s more), unless a test of that delay sets it.
    env: { PATH: process.env.PATH ?? '', PORT: '0', TESSERA_LOG_LEVEL: 'warn', TESSERA_SHUTDOWN_DELAY_MS: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const deadline = Date.now() + startupTimeoutMs; // generous: test files run four at a time
  while (!/Try it:|API reference/.test(output) || (env.NODE_ENV !== 'production' && !output.includes('Try it:'))) {
    if (child.exitCode !== null) throw new Error(`tessera start exited: ${output}`);
    if (Date.now() > deadline) {
      // Killed, or its open pipes would keep the test file's process (and so the run) going forever.
      child.kill('SIGKILL');
      throw new Error(`tessera start printed no base URL in time: ${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const baseUrl = /API base URL:\s+(\S+)/.exec(output)?.[1];
  assert.ok(baseUrl, output);
  return {
    child,
    output: () => output,
    baseUrl,
    origin: new URL(baseUrl).origin,
    privateKey: /private key: (test_pr_\w+)/.exec(output)?.[1],
  };
}

/** Creates the webhook endpoint, then a card and a payment with confirm, which succeeds. */
export async function payWithEndpoint(call: ReturnType<typeof apiCaller>, endpoint: Record<string, unknown>) {
  await call('/webhook_endpoints/create', endpoint);
  const method = await call('/payment_methods/create', {
    type: 'card',
    card: { cardNo: '4242424242424242', expMonth: '12', expYear: '2030', securityCode: '123' },
  });
  const payment = await call('/payment/create', {
    amount: '1999',
    currency: 'USD',
    paymentMethod: method.id,
    confirm: true,
  });
  assert.equal(payment.status, 'succeeded');
  return payment;
}

/** A crash: SIGKILL, no chance to finish anything. */
export async function killService(running: Running): Promise<void> {
  if (running.child.exitCode !== null || running.child.signalCode !== null) return;
  const exited = new Promise((resolve) => running.child.once('exit', resolve));
  running.child.kill('SIGKILL');
  await exited;
}
