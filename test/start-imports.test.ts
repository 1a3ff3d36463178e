import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { apiCaller, payWithEndpoint, startService, stopService, type RunningService } from './helpers/cli-process.js';
import { databaseKind, migratedStorage, storeIndependent, type TestStorage } from './helpers/harness.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';

/**
 * What a start loads (docs/performance.md#test-suite-time): the packages that only some
 * requests need — e-mail, the webhook client, readable terminal logs, password hashing and, on
 * PostgreSQL, PGlite — are imported at their first use, not by every start. Which packages the
 * started process imported is written by a module hook preloaded into it (fixtures/record-imports.mjs).
 */
const deferred = ['nodemailer', 'undici', 'pino-pretty', '@node-rs/argon2'];

describe(`what tessera start loads (${databaseKind})`, { skip: storeIndependent }, () => {
  const scratch = mkdtempSync(path.join(tmpdir(), 'tessera-imports-'));
  const importsFile = path.join(scratch, 'imports.txt');
  let storage: TestStorage | undefined;
  let receiver: Receiver;
  let running: RunningService;

  /** The packages the started process has imported so far, by name. */
  const imported = () =>
    new Set(
      readFileSync(importsFile, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((specifier) =>
          specifier
            .split('/')
            .slice(0, specifier.startsWith('@') ? 2 : 1)
            .join('/'),
        ),
    );

  before(async () => {
    storage = await migratedStorage('tessera-imports-');
    receiver = await startReceiver();
    const hook = pathToFileURL(path.resolve('test/fixtures/record-imports.mjs')).href;
    running = await startService({ ...storage.env, RECORD_IMPORTS_FILE: importsFile }, ['--import', hook]);
  });
  after(async () => {
    await stopService(running);
    await receiver.close();
    await storage?.remove();
    rmSync(scratch, { recursive: true, force: true });
  });

  test('a started service has imported none of the packages only some requests need', () => {
    const packages = imported();
    assert.ok(packages.has('fastify'), `the hook records imports: ${[...packages].join(', ')}`);
    for (const name of deferred) assert.equal(packages.has(name), false, `${name} was imported at start`);
    // PGlite's thread loads PGlite; a service on PostgreSQL never does.
    if (databaseKind === 'postgres') assert.equal(packages.has('@electric-sql/pglite'), false);
  });

  test('the first webhook imports the webhook client, and is delivered', async () => {
    const payment = await payWithEndpoint(apiCaller(running), { url: receiver.url() });
    const [delivered] = await receiver.waitFor(1);
    assert.match(delivered!.body, new RegExp(payment.id as string));
    assert.ok(imported().has('undici'));
  });
});
