import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createTestDatabase, databaseKind, migratedDataDir, storeIndependent } from './helpers/harness.js';
import { logFormat } from '../src/config.js';
import { createLogger, prettyDestination } from '../src/logger.js';

describe('service log format', () => {
  test('readable lines only on a terminal in development; JSON lines on a pipe, in production and in tests', () => {
    assert.equal(logFormat('development', true), 'pretty');
    assert.equal(logFormat('development', false), 'json');
    assert.equal(logFormat('production', true), 'json');
    assert.equal(logFormat('production', false), 'json');
    assert.equal(logFormat('test', true), 'json');
    assert.equal(logFormat('test', false), 'json');
  });

  test('a readable line names the level and message, and card data and keys stay masked in it', async () => {
    let written = '';
    const logger = createLogger('info', await prettyDestination(false, { write: (text: string) => (written += text) }));
    logger.info(
      {
        payment: { cardNo: '4242424242424242', securityCode: '123' },
        req: { method: 'GET', url: '/v1/customers', headers: { authorization: 'Bearer test_pr_secret' } },
      },
      'request completed',
    );
    assert.match(written, /INFO.*request completed/);
    assert.doesNotMatch(written.trim(), /^\{/, 'a readable line, not JSON');
    assert.match(written, /\/v1\/customers/);
    assert.doesNotMatch(written, /4242424242424242|securityCode: "123"|test_pr_secret/);
  });
});

/**
 * `tessera start` on a terminal (a pseudo-terminal made by script(1)), as a newcomer runs it: one
 * line per request, so the banner's key and sign-in link stay in sight; the full detail at debug.
 */
describe('tessera start on a terminal', { skip: storeIndependent }, () => {
  const cleanups: Array<() => void> = [];
  after(() => {
    for (const cleanup of cleanups) cleanup();
  });

  async function startOnTerminal(level: string) {
    const dataDir = await migratedDataDir('tessera-terminal-');
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const command = `${process.execPath} --liftoff-only dist/cli/index.js start`;
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      env: {
        PATH: process.env.PATH ?? '',
        NODE_ENV: 'development',
        NO_COLOR: '1',
        PORT: '0',
        TESSERA_SHUTDOWN_DELAY_MS: '0',
        TESSERA_LOG_LEVEL: level,
        TESSERA_DATA_DIR: dataDir,
        ...(databaseKind === 'postgres' ? { DATABASE_URL: (await database()).url } : {}),
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    cleanups.push(() => child.kill('SIGKILL'));
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const waitFor = async (pattern: RegExp) => {
      for (let tries = 0; !pattern.test(output); tries++) {
        assert.ok(tries < 2400 && child.exitCode === null, `no ${pattern} in: ${output}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    await waitFor(/Try it:/);
    const baseUrl = /API base URL:\s+(\S+)/.exec(output)![1]!;
    const key = /private key: (test_pr_\w+)/.exec(output)![1]!;
    const before = output.length;
    const answer = await fetch(`${baseUrl}/customers`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(answer.status, 200);
    return {
      after: async (pattern: RegExp) => {
        await waitFor(pattern);
        return output.slice(before);
      },
      stop: () => child.kill('SIGKILL'),
    };
  }

  async function database() {
    const made = await createTestDatabase({ migrated: true });
    cleanups.push(() => void made.drop());
    return made;
  }

  test('one line per request at the default level; the full detail at debug', async () => {
    const info = await startOnTerminal('info');
    const logged = await info.after(/GET \/api\/services\/v1\/customers → 200 in \d+ ms \(\w+\)/);
    info.stop();
    const lines = logged.split(/\r?\n/).filter((line) => line.includes('/customers'));
    assert.equal(lines.length, 1, logged);
    assert.doesNotMatch(logged, /incoming request|request completed|remoteAddress/);

    const debug = await startOnTerminal('debug');
    const detailed = await debug.after(/request completed/);
    debug.stop();
    assert.match(detailed, /incoming request/);
    assert.match(detailed, /remoteAddress/);
  });
});
