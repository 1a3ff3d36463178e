/**
 * A real HTTP CONNECT proxy for tests: Debian's Squid (`.ci/run` installs it), started with a
 * configuration written here — loopback only, no cache, the access log in a folder of its own —
 * and stopped and started again on the same port, as an operator's egress proxy going down.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const squidBinary = ['/usr/sbin/squid', '/usr/bin/squid'].find((file) => existsSync(file));

/** Why the proxy tests cannot run here, or undefined when they can. In CI Squid must be there. */
export function squidMissing(): string | undefined {
  if (squidBinary) return undefined;
  if (process.env.CI) throw new Error('Squid is not installed: .ci/run installs the squid package');
  return 'Squid is not installed (apt-get install squid)';
}

export interface Squid {
  readonly port: number;
  /** http://127.0.0.1:port, for TESSERA_WEBHOOK_PROXY. */
  readonly url: string;
  /** The access log's lines so far (Squid writes a tunnel's line when the tunnel closes). */
  accessLog(): string[];
  /** Waits until a line of the access log matches. */
  waitForLog(pattern: RegExp, timeoutMs?: number): Promise<string>;
  stop(): Promise<void>;
  /** Starts it again on the same port. */
  start(): Promise<void>;
  close(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Starts Squid on a free loopback port; CONNECT to `deniedPorts` is refused (403). */
export async function startSquid(options: { deniedPorts?: number[] } = {}): Promise<Squid> {
  if (!squidBinary) throw new Error('Squid is not installed');
  const dir = mkdtempSync(path.join(tmpdir(), 'tessera-squid-'));
  // Squid drops root for its own user, which must write the logs here.
  chmodSync(dir, 0o777);
  const port = await freePort();
  const denied = options.deniedPorts ?? [];
  const config = path.join(dir, 'squid.conf');
  const accessLog = path.join(dir, 'access.log');
  writeFileSync(
    config,
    [
      `http_port 127.0.0.1:${port}`,
      `pid_filename ${path.join(dir, 'squid.pid')}`,
      `access_log stdio:${accessLog}`,
      `cache_log ${path.join(dir, 'cache.log')}`,
      'cache_store_log none',
      'cache deny all',
      `coredump_dir ${dir}`,
      'shutdown_lifetime 0 seconds',
      'pinger_enable off',
      ...(denied.length ? [`acl tessera_denied port ${denied.join(' ')}`, 'http_access deny tessera_denied'] : []),
      'http_access allow localhost',
      'http_access deny all',
      '',
    ].join('\n'),
  );
  const check = spawnSync(squidBinary, ['-k', 'parse', '-f', config], { encoding: 'utf8' });
  if (check.status !== 0) throw new Error(`squid -k parse failed: ${check.stderr}`);

  let child: ChildProcess | undefined;
  const start = async () => {
    const started = spawn(squidBinary, ['-N', '-f', config], { cwd: dir, stdio: 'ignore' });
    child = started;
    const deadline = Date.now() + 15_000;
    while (!(await listening(port))) {
      if (started.exitCode !== null) {
        throw new Error(`squid exited: ${readFileSync(path.join(dir, 'cache.log'), 'utf8').slice(-2000)}`);
      }
      if (Date.now() > deadline) throw new Error('squid did not listen within 15 s');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  const stop = async () => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGTERM');
    const timer = setTimeout(() => running.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
    while (await listening(port)) await new Promise((resolve) => setTimeout(resolve, 50));
  };
  const lines = () => (existsSync(accessLog) ? readFileSync(accessLog, 'utf8').split('\n').filter(Boolean) : []);
  await start();
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    accessLog: lines,
    async waitForLog(pattern, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = lines().find((line) => pattern.test(line));
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`no access log line matches ${pattern}:\n${lines().join('\n')}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    stop,
    start,
    async close() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
