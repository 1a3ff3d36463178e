/**
 * A Prism proxy holding Adyen's published Checkout API description (test/fixtures/adyen/, MIT):
 * connector → Prism → stand-in, where Prism refuses any request or answer the description does not
 * allow (`--errors`: a refused request is answered 422, a refused answer 500, each with the
 * violations, which the connector then reports as a failure). docs/processors-adyen.md, Testing.
 *
 * Prism matches the description's paths without its server's base path (`/v71`), and forwards the
 * request path as it came, without the upstream's own path: the connector's base URL is Prism's
 * root, and the stand-in answers on the same paths.
 */

import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The same depth under test/ and .test-dist/, so the repository's copy is found from either. */
const repositoryRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const adyenDescriptionPath = path.join(repositoryRoot, 'test', 'fixtures', 'adyen', 'CheckoutService-v71.json');

export interface PrismProxy {
  /** Prism's root, to give the connector as its base URL. */
  url: string;
  /** How long Prism took to load the description and listen. */
  startupMs: number;
  /** Prism's recent log lines (its violations), for a failing test's message. */
  log(): string;
  /** Runs `call`; if it throws, throws again with Prism's last log lines (the violations) added. */
  explain<T>(call: () => Promise<T>): Promise<T>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (typeof address !== 'object' || address === null) throw new Error('No free port');
  return address.port;
}

function prismEntry(): string {
  const require = createRequire(import.meta.url);
  const packageFile = require.resolve('@stoplight/prism-cli/package.json');
  const { bin } = require(packageFile) as { bin: Record<string, string> };
  return path.join(path.dirname(packageFile), bin.prism!);
}

/** Starts `prism proxy <description> <upstream> --errors` and resolves once it listens. */
export async function startPrismProxy({
  upstream,
  description = adyenDescriptionPath,
  startTimeoutMs = 120_000,
}: {
  upstream: string;
  description?: string;
  startTimeoutMs?: number;
}): Promise<PrismProxy> {
  const port = await freePort();
  const started = performance.now();
  const child: ChildProcess = spawn(
    process.execPath,
    [prismEntry(), 'proxy', description, upstream, '--errors', '--host', '127.0.0.1', '--port', String(port)],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    if (lines.length > 200) lines.splice(0, lines.length - 200);
  };
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);

  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`Prism did not listen within ${startTimeoutMs} ms:\n${lines.join('\n')}`));
    }, startTimeoutMs);
    const onData = (chunk: Buffer) => {
      keep(chunk);
      if (lines.some((line) => line.includes('Prism is listening'))) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', keep);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`Prism exited (${String(code)}) before listening:\n${lines.join('\n')}`));
    });
  });

  return {
    url: `http://127.0.0.1:${port}`,
    startupMs: Math.round(performance.now() - started),
    log: () => lines.join('\n'),
    async explain(call) {
      try {
        return await call();
      } catch (err) {
        const recent = lines.slice(-15).join('\n');
        throw new Error(`${(err as Error).message}\nPrism:\n${recent}`, { cause: err });
      }
    },
    async stop() {
      process.removeListener('exit', killOnExit);
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
}
