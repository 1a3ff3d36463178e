/**
 * docs/operations.md#topology, as an operator meets it with real processes: SIGTERM drains, a database outage is
 * answered 503 and survived without a restart, a schema newer than the code is refused, and
 * --no-migrate starts only against a migrated database. The worker serves health and metrics.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { createTestDatabase, databaseKind, migratedDataDir } from './helpers/harness.js';
import { runCli, spawnCli, startAnyService, stopService, type Running } from './helpers/cli-process.js';
import { startTcpProxy } from './helpers/tcp-proxy.js';
import { knownMigrations } from '../src/db/migrate.js';

const onPostgres = databaseKind === 'postgres';
const adminKey = `operator_${randomBytes(16).toString('hex')}`;
const cleanups: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/** Settings of a process on a database of its own: a PostgreSQL database, or a PGlite folder. */
async function freshDatabase(migrated: boolean): Promise<Record<string, string>> {
  const common = { NODE_ENV: 'test', TESSERA_MASTER_KEY: randomBytes(32).toString('hex'), TESSERA_ADMIN_KEY: adminKey };
  if (onPostgres) {
    const database = await createTestDatabase({ migrated });
    cleanups.push(() => database.drop());
    return { ...common, DATABASE_URL: database.url };
  }
  const dir = migrated
    ? await migratedDataDir('tessera-lifecycle-')
    : mkdtempSync(path.join(tmpdir(), 'tessera-lifecycle-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return { ...common, TESSERA_DATA_DIR: dir };
}

async function call(running: Running, method: string, route: string, body?: unknown, headers = {}) {
  const response = await fetch(`${running.baseUrl}${route}`, {
    method,
    headers: { authorization: `Bearer ${running.privateKey}`, 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as any };
}

const health = async (origin: string, route = '/health/ready') => {
  const response = await fetch(`${origin}${route}`);
  return { status: response.status, body: (await response.json()) as any };
};

describe(`process lifecycle (${databaseKind})`, () => {
  it('SIGTERM: ready says stopping at once, the request under way is answered, the process exits 0', async () => {
    const env = await freshDatabase(true);
    const running = await startAnyService({
      ...env,
      // The request below holds its answer 4 s: it is under way when SIGTERM comes.
      TESSERA_TEST_ANSWER_DELAY_MS: '4000',
      TESSERA_SHUTDOWN_DELAY_MS: '3000',
    });
    cleanups.push(() => stopService(running));
    assert.equal((await health(running.origin)).status, 200);
    const inFlight = call(
      running,
      'POST',
      '/customers/create',
      { email: 'drain@example.com' },
      {
        'idempotency-key': 'drain-1',
      },
    );
    // A connection that never sends a byte (a client's preconnect; undici opens one again after an
    // aborted event stream): Node counts it busy until its headers timeout (60–90 s), past the guard.
    const unused = connect(Number(new URL(running.origin).port), '127.0.0.1');
    const unusedClosed = new Promise<void>((resolve) => unused.once('close', () => resolve()));
    unused.on('error', () => {});
    await new Promise((resolve) => setTimeout(resolve, 500));
    const exited = new Promise<number | null>((resolve) => running.child.once('exit', (code) => resolve(code)));
    running.child.kill('SIGTERM');
    // The signal arrives when it arrives: ready is asked until it has been handled. Before that,
    // a loaded machine may answer 503 "unavailable" (the database check's 1 s passed, as with CI's
    // two stores side by side): not this test's subject, so asked again.
    let ready = await health(running.origin);
    for (let tries = 0; ready.body.status !== 'stopping' && tries < 80; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      ready = await health(running.origin);
    }
    assert.equal(ready.status, 503);
    assert.equal(ready.body.status, 'stopping');
    assert.equal((await health(running.origin, '/health/live')).status, 200, 'still alive while it drains');
    const answered = await inFlight;
    assert.equal(answered.status, 200);
    assert.equal(answered.body.code, 'success');
    // 0, not the 14 s guard's 1: everything under way finished, and the unused connection was closed.
    assert.equal(await exited, 0, running.output());
    await unusedClosed;
  });

  // A rolling deploy: the process goes on serving for its shutdown delay (2 s) after SIGTERM while
  // the balancer, seeing ready answer 503, sends new connections elsewhere (one a client opened in
  // the instant the process stops listening would be reset by the kernel, whatever the process does).
  it('SIGTERM under keep-alive load: no request is reset, and every answer after it says Connection: close', async () => {
    const env = await freshDatabase(true);
    const running = await startAnyService({ ...env, TESSERA_SHUTDOWN_DELAY_MS: '2000' });
    cleanups.push(() => stopService(running));
    const { port } = new URL(running.origin);
    type Outcome = { afterStop: boolean; status?: number; connection?: string; error?: string };
    const outcomes: Outcome[] = [];
    let stopping = false;
    let refused = false;
    let answeredBeforeStop = 0;
    const post = (agent: http.Agent, route: string, body: unknown) =>
      new Promise<{ status: number; connection: string; body: any }>((resolve, reject) => {
        const request = http.request(
          {
            host: '127.0.0.1',
            port,
            agent,
            method: 'POST',
            path: `/api/services/v1${route}`,
            headers: { authorization: `Bearer ${running.privateKey}`, 'content-type': 'application/json' },
          },
          (response) => {
            let text = '';
            response.on('data', (chunk: Buffer) => (text += chunk.toString()));
            response.on('end', () =>
              resolve({
                status: response.statusCode!,
                connection: String(response.headers.connection),
                body: JSON.parse(text),
              }),
            );
            response.on('error', reject);
          },
        );
        request.on('error', (error: NodeJS.ErrnoException) =>
          reject(
            new Error(`${error.code ?? error.message} (${request.reusedSocket ? 'kept-alive' : 'new'} connection)`),
          ),
        );
        request.end(JSON.stringify(body));
      });
    // Ten clients, each on one kept-alive connection, posting payments until the process is known
    // to stop and closes their connection (the balancer's part: the next goes to another process),
    // or no longer takes connections (ECONNREFUSED: nothing was sent).
    const clients = Array.from({ length: 10 }, async () => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const card = { cardNo: '4242424242424242', expMonth: '12', expYear: '2030', securityCode: '123' };
        let method = '';
        while (!refused) {
          const [route, body] = method
            ? ['/payment/create', { amount: '1000', currency: 'USD', paymentMethod: method, confirm: true }]
            : ['/payment_methods/create', { type: 'card', card }];
          const afterStop = stopping;
          try {
            const answer = await post(agent, route, body);
            outcomes.push({ afterStop, status: answer.status, connection: answer.connection });
            if (!stopping) answeredBeforeStop++;
            if (afterStop && answer.connection === 'close') break;
            method = method || answer.status !== 200 ? '' : (answer.body.data.id as string);
          } catch (error) {
            const message = (error as Error).message;
            outcomes.push({ afterStop, error: message });
            if (message.startsWith('ECONNREFUSED')) refused = true;
          }
        }
      } finally {
        agent.destroy();
      }
    });
    while (answeredBeforeStop < 40) await new Promise((resolve) => setTimeout(resolve, 20));
    const exited = new Promise<number | null>((resolve) => running.child.once('exit', (code) => resolve(code)));
    running.child.kill('SIGTERM');
    // The signal is handled when ready says so; every request sent after that is answered with Connection: close.
    const ready = () => health(running.origin).catch(() => ({ status: 0 }));
    for (let tries = 0; (await ready()).status === 200; tries++) {
      assert.ok(tries < 200, 'ready turns 503 after SIGTERM');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    stopping = true;
    assert.equal(await exited, 0, running.output());
    refused = true;
    await Promise.all(clients);
    const failures = outcomes.filter(
      (outcome) => outcome.error !== undefined && !outcome.error.startsWith('ECONNREFUSED'),
    );
    assert.deepEqual(failures, [], 'no request is reset or hung up');
    const afterStop = outcomes.filter((outcome) => outcome.afterStop && outcome.status !== undefined);
    assert.ok(afterStop.length > 0, 'requests were answered after SIGTERM');
    for (const outcome of afterStop) assert.equal(outcome.connection, 'close', JSON.stringify(outcome));
  });

  it('refuses to start against a schema newer than it knows, naming both versions in one line', async () => {
    const env = await freshDatabase(true);
    const future = '9999_from_a_newer_version.sql';
    if (onPostgres) {
      const client = new pg.Client({ connectionString: env.DATABASE_URL });
      await client.connect();
      await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [future]);
      await client.end();
    } else {
      const migrated = await runCli(['migrate'], env);
      assert.equal(migrated.code, 0, migrated.stderr);
      const lite = new PGlite(env.TESSERA_DATA_DIR);
      await lite.query('INSERT INTO schema_migrations (version) VALUES ($1)', [future]);
      await lite.close();
    }
    const latest = (await knownMigrations(path.resolve('src/migrations'))).at(-1)!;
    for (const args of [['start'], ['start', '--no-migrate'], ['migrate']]) {
      const refused = await runCli(args, { ...env, PORT: '0' });
      assert.equal(refused.code, 1, args.join(' '));
      const lines = refused.stderr.trim().split('\n');
      assert.equal(lines.length, 1, refused.stderr);
      assert.match(lines[0]!, new RegExp(`schema is at ${future}.*latest migration is ${latest}`));
    }
  });

  it('--no-migrate refuses a database with pending migrations, and starts once tessera migrate ran', async () => {
    const env = await freshDatabase(false);
    const refused = await runCli(['start', '--no-migrate'], { ...env, PORT: '0' });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /--no-migrate is set: run tessera migrate first/);
    assert.equal(refused.stderr.trim().split('\n').length, 1);
    const migrated = await runCli(['migrate'], env);
    assert.equal(migrated.code, 0, migrated.stderr);
    assert.match(migrated.stdout, /Applied 0001_core\.sql/);
    const running = await startAnyService({ ...env, TESSERA_AUTO_MIGRATE: 'off' });
    cleanups.push(() => stopService(running));
    const ready = await health(running.origin);
    assert.equal(ready.status, 200);
    assert.equal(ready.body.checks.schema.status, 'ok');
  });

  it(
    'a database outage answers 503 service_unavailable (API) and a 503 page (hosted pages, dashboard), ready 503, and the process reconnects by itself',
    { skip: onPostgres ? false : 'PostgreSQL only: PGlite runs inside the process' },
    async () => {
      const env = await freshDatabase(true);
      const target = new URL(env.DATABASE_URL!);
      const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
      cleanups.push(() => proxy.close());
      const viaProxy = new URL(env.DATABASE_URL!);
      viaProxy.port = String(proxy.port);
      const running = await startAnyService({ ...env, DATABASE_URL: viaProxy.toString() });
      cleanups.push(() => stopService(running));

      const before = await call(running, 'POST', '/customers/create', { email: 'before@example.com' });
      assert.equal(before.status, 200);
      const checkout = await call(running, 'POST', '/checkout/session/create', {
        amountTotal: '1500',
        currency: 'EUR',
        returnUrl: 'https://shop.example/done',
      });
      assert.equal(checkout.status, 200, JSON.stringify(checkout.body));
      const invoice = await call(running, 'POST', '/invoices/create', {
        customerId: before.body.data.id,
        currency: 'EUR',
        lineItems: [{ description: 'Tea club, monthly', amount: '1990', quantity: 1 }],
        collectionMethod: 'send_invoice',
        daysUntilDue: 10,
      });
      assert.equal(invoice.status, 200, JSON.stringify(invoice.body));
      const open = await call(running, 'POST', `/invoices/${invoice.body.data.id}/finalize`);
      assert.equal(open.status, 200, JSON.stringify(open.body));
      const invoicePage = new URL(open.body.data.hostedInvoiceUrl);

      await proxy.cut();
      const during = await call(running, 'POST', '/customers/create', { email: 'during@example.com' });
      assert.equal(during.status, 503, JSON.stringify(during.body));
      assert.deepEqual(during.body, {
        code: 'service_unavailable',
        msg: 'The service cannot reach its database just now; nothing was done. Retry shortly.',
        data: null,
      });
      assert.equal(during.headers.get('retry-after'), '2');
      const read = await call(running, 'GET', `/customers/${before.body.data.id}`);
      assert.equal(read.status, 503);
      const ready = await health(running.origin);
      assert.equal(ready.status, 503);
      assert.equal(ready.body.status, 'unavailable');
      assert.equal(ready.body.checks.database.status, 'failing');
      assert.equal((await health(running.origin, '/health/live')).status, 200);
      // /metrics still answers, with tessera_ready 0 and without the database-wide gauges it cannot read.
      const scrape = async () => {
        const response = await fetch(`${running.origin}/metrics`, { headers: { authorization: `Bearer ${adminKey}` } });
        return { status: response.status, text: await response.text() };
      };
      const outage = await scrape();
      assert.equal(outage.status, 200, outage.text.slice(0, 300));
      assert.match(outage.text, /^tessera_ready 0$/m);
      assert.doesNotMatch(outage.text, /^tessera_webhook_deliveries_pending /m);
      // The pages a browser opens answer 503 too, a page (in the shopper's language), never JSON or a 500.
      const pages = [
        { route: `/checkout/${checkout.body.data.id}`, language: 'de-DE', text: /Bitte versuchen Sie es erneut/ },
        {
          route: `${invoicePage.pathname}${invoicePage.search}`,
          language: 'de-DE',
          text: /Bitte versuchen Sie es erneut/,
        },
        { route: `/dashboard/payments`, language: 'en', text: /cannot reach its database just now/ },
      ];
      for (const { route, language, text } of pages) {
        const page = await fetch(`${running.origin}${route}`, {
          headers: { 'accept-language': language, cookie: `tessera_session=${randomBytes(16).toString('hex')}` },
        });
        const body = await page.text();
        assert.equal(page.status, 503, `${route}: ${body.slice(0, 300)}`);
        assert.match(page.headers.get('content-type') ?? '', /^text\/html/, route);
        assert.equal(page.headers.get('retry-after'), '2', route);
        assert.match(body, text, route);
      }

      await proxy.restore();
      for (let tries = 0; (await health(running.origin)).status !== 200; tries++) {
        assert.ok(tries < 100, 'ready again once the database is back');
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const after = await call(running, 'GET', `/customers/${before.body.data.id}`);
      assert.equal(after.status, 200, 'what was answered before the outage is there');
      assert.equal((await call(running, 'POST', '/customers/create', { email: 'after@example.com' })).status, 200);
      assert.match((await scrape()).text, /^tessera_ready 1$/m);
      assert.equal((await fetch(`${running.origin}/checkout/${checkout.body.data.id}`)).status, 200);
      assert.equal((await fetch(`${running.origin}${invoicePage.pathname}${invoicePage.search}`)).status, 200);
      assert.doesNotMatch(running.output(), /"level":50/, 'an outage is not logged as an error');
    },
  );

  it(
    'tessera worker serves /health/ready, /health/live and /metrics on its own port, and stops on SIGTERM',
    { skip: onPostgres ? false : 'PostgreSQL only: the worker needs DATABASE_URL' },
    async () => {
      const env = await freshDatabase(true);
      const worker = spawnCli(['worker'], { ...env, TESSERA_WORKER_HEALTH_PORT: '0', TESSERA_SHUTDOWN_DELAY_MS: '0' });
      cleanups.push(async () => void (await worker.stop()));
      const [, origin] = await worker.waitFor(/Health and metrics: (http:\/\/[\d.]+:\d+)\//, 120_000);
      assert.deepEqual(await health(origin!), {
        status: 200,
        body: {
          status: 'ok',
          checks: { process: { status: 'ok' }, database: { status: 'ok' }, schema: { status: 'ok' } },
        },
      });
      assert.equal((await health(origin!, '/health/live')).status, 200);
      assert.equal((await fetch(`${origin}/metrics`)).status, 401);
      const metrics = await fetch(`${origin}/metrics`, { headers: { authorization: `Bearer ${adminKey}` } });
      assert.equal(metrics.status, 200);
      assert.match(await metrics.text(), /^tessera_webhook_deliveries_pending 0$/m);
      const exited = new Promise<number | null>((resolve) => worker.child.once('exit', (code) => resolve(code)));
      worker.child.kill('SIGTERM');
      assert.equal(await exited, 0);
      // Nothing a worker prints at its start is a warning of Fastify's own (FSTDEP023 was, at every start).
      assert.doesNotMatch(worker.output(), /FSTDEP|DeprecationWarning/);
    },
  );
});
