/**
 * One Tessera per test file, on PGlite in memory by default or on a fresh PostgreSQL database
 * when TESSERA_TEST_DATABASE_URL is set (the database is created here and dropped in close()).
 * Tests stay independent by each creating its own merchant. Either database starts as a copy of
 * one with every migration already applied (./templates.ts), which spares each test file initdb
 * and the migrations; the service's migrate() still runs and finds nothing to apply. On PGlite, a
 * closed Tessera's database is put back to the template's state and taken by the process's next
 * one (src/db/pglite-reset.ts), which spares loading the template again.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, createWriteStream, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { manualClock } from '../../src/clock.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createTessera, type Tessera } from '../../src/composition/app.js';
import { createLogger } from '../../src/logger.js';
import type { Processor } from '../../src/processor/processor.js';
import { createSandboxProcessor } from '../../src/processor/sandbox.js';
import { migratedPgliteFolder, migratedPgliteTemplate, migratedPostgresTemplate } from './templates.js';

export const apiBase = '/api/services/v1';
const testDatabaseUrl = process.env.TESSERA_TEST_DATABASE_URL;
export const databaseKind = testDatabaseUrl ? 'postgres' : 'pglite';

/**
 * Test files whose subject does not depend on the store behind the service — pages in a browser,
 * the command line or the packed SDK talking HTTP to a started service — are marked with this as
 * their `skip`.
 * `npm test` runs them; CI runs them in its PostgreSQL pass only (`.ci/run` sets
 * TESSERA_TEST_STORE_INDEPENDENT=skip for the PGlite pass, whose service starts cost the most),
 * while what does depend on the store (migrations, the data folder, restarts, the HTTP API) runs
 * on both.
 */
export const storeIndependent: string | false =
  process.env.TESSERA_TEST_STORE_INDEPENDENT === 'skip'
    ? 'independent of the store: CI runs it in the PostgreSQL pass (TESSERA_TEST_STORE_INDEPENDENT=skip)'
    : false;

export interface TestContext {
  tessera: Tessera;
  clock: ReturnType<typeof manualClock>;
  /** The configuration of this Tessera: a second one on the same database (PostgreSQL) can share it. */
  config: Config;
  operatorKey: string;
  /** A new merchant with its own keys, tokenization and MIT on unless told otherwise. */
  merchant(options?: { tokenization?: boolean; mit?: boolean; name?: string }): Promise<TestMerchant>;
  /** Runs every scheduled job due at the clock's current time. */
  runJobs(): Promise<number>;
  /**
   * Another Tessera on the same database and clock, as a second process would be (PostgreSQL;
   * its own pool, silent log). The caller closes it.
   */
  secondProcess(): Promise<Tessera>;
  /** Every log line this Tessera has written so far, as written (JSON text). */
  logLines(): string[];
  close(): Promise<void>;
}

export interface TestMerchant {
  id: string;
  privateKey: string;
  publicKey: string;
  /** Calls the merchant API with this merchant's private key; `path` is relative to the base URL. */
  call(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<ApiResponse>;
}

export interface ApiResponse {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: { code: string; msg: string; data: any };
  raw: string;
}

/**
 * A fresh PostgreSQL database on the server of TESSERA_TEST_DATABASE_URL, dropped by drop():
 * empty, or with `migrated` a copy of one with every migration applied.
 */
export async function createTestDatabase(
  options: { migrated?: boolean } = {},
): Promise<{ url: string; drop(): Promise<void> }> {
  if (!testDatabaseUrl) throw new Error('TESSERA_TEST_DATABASE_URL is not set');
  const name = `tessera_test_${randomBytes(6).toString('hex')}`;
  const template = options.migrated ? await migratedPostgresTemplate(testDatabaseUrl) : undefined;
  const admin = new pg.Client({ connectionString: testDatabaseUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`);
  await admin.end();
  const url = new URL(testDatabaseUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: testDatabaseUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

/**
 * A new data folder (mkdtemp, named by `prefix`) for a Tessera a test starts on it, with every
 * migration applied: on PGlite it holds a copy of a migrated database (templates.ts), so that the
 * start skips initdb and the migrations as every start of an install after its first does; on
 * PostgreSQL the database comes from createTestDatabase({ migrated: true }) and the folder is empty.
 * The tests of a first start (cli, README, migrate, --no-migrate) use an empty folder.
 */
export async function migratedDataDir(prefix: string): Promise<string> {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  if (!testDatabaseUrl) await migratedPgliteFolder(dir);
  return dir;
}

/** Where a Tessera a test starts keeps its data, and how to remove it. */
export interface TestStorage {
  dataDir: string;
  /** PostgreSQL only: the test's own database. */
  databaseUrl?: string;
  /** TESSERA_DATA_DIR, and DATABASE_URL on PostgreSQL: spread into the started service's environment. */
  env: { TESSERA_DATA_DIR: string; DATABASE_URL?: string };
  /** Removes the folder and drops the database. */
  remove(): Promise<void>;
}

/**
 * Migrated storage for a Tessera a test starts: a migratedDataDir folder and, on PostgreSQL, a
 * database of its own made from the migrated template, so that both are migrated alike.
 */
export async function migratedStorage(prefix: string): Promise<TestStorage> {
  const dataDir = await migratedDataDir(prefix);
  const database = testDatabaseUrl ? await createTestDatabase({ migrated: true }) : undefined;
  return {
    dataDir,
    ...(database ? { databaseUrl: database.url } : {}),
    env: { TESSERA_DATA_DIR: dataDir, ...(database ? { DATABASE_URL: database.url } : {}) },
    async remove() {
      rmSync(dataDir, { recursive: true, force: true });
      await database?.drop();
    },
  };
}

export async function startTestApp(
  options: {
    followUpDelayMs?: number;
    /** More settings, e.g. TESSERA_WEBHOOK_RETRY_DELAYS_SECONDS or TESSERA_WEBHOOK_TIMEOUT_MS. */
    env?: Record<string, string>;
    /** Another processor than the sandbox (e.g. one wrapping it, to count its calls). */
    processor?: Processor;
  } = {},
): Promise<TestContext> {
  const clock = manualClock(new Date('2026-11-22T12:00:00.000Z'));
  const database = testDatabaseUrl ? await createTestDatabase({ migrated: true }) : undefined;
  const databaseUrl = database?.url;
  const operatorKey = `operator_${randomBytes(16).toString('hex')}`;
  const config = loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: databaseUrl,
    // PGlite in memory; the data folder holds nothing else, since both keys are given.
    TESSERA_DATA_DIR: 'memory://',
    TESSERA_MASTER_KEY: randomBytes(32).toString('hex'),
    TESSERA_ADMIN_KEY: operatorKey,
    TESSERA_LOG_LEVEL: 'debug',
    // A production Tessera refuses the template (a test-only setting): it runs initdb and migrates.
    ...(testDatabaseUrl || options.env?.NODE_ENV === 'production'
      ? {}
      : { TESSERA_TEST_PGLITE_TEMPLATE: await migratedPgliteTemplate() }),
    ...options.env,
  });
  // Every log line of the run is kept, so that a final check can search them for card data.
  const logDir = path.resolve('.test-logs');
  mkdirSync(logDir, { recursive: true });
  const logFile = path.join(logDir, `${path.basename(process.argv[1] ?? 'test')}-${databaseKind}-${process.pid}.log`);
  const logFileStream = createWriteStream(logFile, { flags: 'a' });
  const logged: string[] = [];
  // Each line also kept in memory, for tests of what is logged.
  const logger = createLogger('debug', {
    write(line: string) {
      logged.push(line);
      logFileStream.write(line);
    },
  });
  const tessera = await createTessera({
    config,
    clock,
    logger,
    processor: options.processor ?? createSandboxProcessor({ followUpDelayMs: options.followUpDelayMs ?? 3000 }),
  });
  await tessera.server.ready();

  async function inject(
    method: string,
    url: string,
    body: unknown,
    headers: Record<string, string>,
  ): Promise<ApiResponse> {
    const response = await tessera.server.inject({
      method: method as 'GET',
      url,
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      payload: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    let parsed: ApiResponse['body'];
    try {
      parsed = JSON.parse(response.body);
    } catch {
      parsed = { code: '', msg: '', data: null };
    }
    return { status: response.statusCode, headers: response.headers, body: parsed, raw: response.body };
  }

  return {
    tessera,
    clock,
    config,
    operatorKey,
    async merchant({ tokenization = true, mit = true, name = 'Test merchant' } = {}) {
      const created = await inject(
        'POST',
        '/admin/v1/merchants/create',
        { name, tokenization, mit },
        {
          authorization: `Bearer ${operatorKey}`,
        },
      );
      if (created.status !== 200) throw new Error(`merchant create failed: ${created.raw}`);
      const data = created.body.data;
      return {
        id: data.id,
        privateKey: data.keys.privateKey,
        publicKey: data.keys.publicKey,
        call: (method, path, body, headers = {}) =>
          inject(method, `${apiBase}${path}`, body, { authorization: `Bearer ${data.keys.privateKey}`, ...headers }),
      };
    },
    runJobs: () => tessera.jobs.runDue(),
    secondProcess: () => createTessera({ config, clock, logger: createLogger('silent') }),
    logLines: () => [...logged],
    async close() {
      await tessera.close();
      await database?.drop();
    },
  };
}

/** Raw access for tests of authentication and content types. */
export function injectRaw(context: TestContext, options: import('fastify').InjectOptions) {
  return context.tessera.server.inject(options);
}

/** One unlabelled series (or `name{labels}` exactly as exposed) of the test Tessera's /metrics. */
export async function scrapedMetric(context: TestContext, series: string): Promise<number> {
  const answer = await injectRaw(context, {
    method: 'GET',
    url: '/metrics',
    headers: { authorization: `Bearer ${context.operatorKey}` },
  });
  if (answer.statusCode !== 200) throw new Error(`GET /metrics answered ${answer.statusCode}`);
  const line = answer.body.split('\n').find((entry) => entry.startsWith(`${series} `));
  if (!line) throw new Error(`${series} is not scraped`);
  return Number(line.slice(series.length + 1));
}

/**
 * docs/decisions/0014-legacy-opt-in-and-sequence.md: a new merchant's dynamic (notifyUrl) endpoint sends no legacy notification unless
 * asked; tests of both kinds on notifyUrl ask for it.
 */
export async function legacyOnDynamicEndpoint(merchant: TestMerchant): Promise<void> {
  const list = await merchant.call('GET', '/webhook_endpoints?limit=100');
  const dynamic = (list.body.data.data as Array<{ id: string; kind: string }>).find((row) => row.kind === 'dynamic');
  if (!dynamic) throw new Error(`no dynamic endpoint: ${list.raw}`);
  const updated = await merchant.call('POST', `/webhook_endpoints/${dynamic.id}/update`, { legacyNotifications: true });
  if (updated.status !== 200) throw new Error(`legacy on the dynamic endpoint: ${updated.raw}`);
}

/** A confirmed payment with the sandbox's Visa test card, which succeeds; its answered data. */
export async function payWithTestCard(
  merchant: TestMerchant,
  /** More fields of the payment (a notifyUrl, say). */
  fields: Record<string, unknown> = {},
): Promise<{ id: string; status: string }> {
  const method = await merchant.call('POST', '/payment_methods/create', {
    type: 'card',
    card: { cardNo: '4242424242424242', expMonth: '12', expYear: '2030', securityCode: '123' },
  });
  if (method.status !== 200) throw new Error(`the test card: ${method.raw}`);
  const payment = await merchant.call('POST', '/payment/create', {
    amount: '1999',
    currency: 'USD',
    paymentMethod: method.body.data.id,
    confirm: true,
    ...fields,
  });
  if (payment.status !== 200 || payment.body.data.status !== 'succeeded')
    throw new Error(`the payment: ${payment.raw}`);
  return payment.body.data;
}
