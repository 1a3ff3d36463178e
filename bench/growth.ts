/**
 * The growth phase of `npm run bench` (issue 13): list and filter latency with a big merchant
 * (`--growth-rows`, 1,000,000 payments by default) ÷ the same with 1,000 payments.
 *
 * One merchant, made through the API with one real storing payment (the template). The service
 * is then stopped and the database filled directly with SQL `generate_series`: payments copied
 * from the template row (every column, new id, customer and time), one event per payment (the
 * template's body) and one delivery per event (succeeded, to a disabled endpoint, so nothing is
 * sent). No ANALYZE is run; on PostgreSQL autovacuum is switched off for these tables of the
 * benchmark database, so the planner has no statistics, as before a server's first ANALYZE and
 * as PGlite always.
 *
 * The filtered objects (one customer's payments, one payment's events, one event's deliveries)
 * are the OLDEST rows: written at the small size, then buried under every row of the big size.
 * At each size the service is restarted and each request is timed N times, one at a time.
 */
import { Pool } from 'undici';
import { call } from './api.js';
import { cards } from './cards.js';
import { openDb, type Db } from '../src/db/db.js';

const apiBase = '/api/services/v1';

export interface GrowthTarget {
  /** Starts (or restarts) the service on the same data; resolves with its base URL. */
  start(): Promise<string>;
  stop(): Promise<void>;
  adminKey: string;
  database: { databaseUrl?: string; dataDir?: string };
}

export interface GrowthQuery {
  name: string;
  small: { p50Ms: number; p99Ms: number };
  big: { p50Ms: number; p99Ms: number };
  ratio: number;
  /** PostgreSQL's plan of the query behind it at the big size (EXPLAIN ANALYZE, scans only). */
  plan: string;
}

export interface GrowthResult {
  smallRows: number;
  bigRows: number;
  seedSeconds: number;
  queries: GrowthQuery[];
}

interface Template {
  privateKey: string;
  merchantId: string;
  customerId: string;
  paymentId: string;
}

/** The merchant and its first, real payment: the shape every seeded row copies. */
async function makeTemplate(baseUrl: string, adminKey: string): Promise<Template> {
  const merchant = await call(`${baseUrl}/admin/v1/merchants/create`, adminKey, {
    name: 'Growth merchant',
    tokenization: true,
    mit: true,
  });
  const key = merchant.keys.privateKey as string;
  const customer = await call(`${baseUrl}${apiBase}/customers/create`, key, {
    firstName: 'Growth',
    lastName: 'Customer',
    email: 'growth@example.com',
  });
  const method = await call(`${baseUrl}${apiBase}/payment_methods/create`, key, {
    type: 'card',
    card: { ...cards[0]!, expMonth: '12', expYear: '2030' },
  });
  const payment = await call(`${baseUrl}${apiBase}/payment/create`, key, {
    amount: '1000',
    currency: 'USD',
    customerId: customer.id,
    paymentMethod: method.id,
    confirm: 'true',
    setupFutureUsage: 'on',
    description: 'Growth template payment',
  });
  return { privateKey: key, merchantId: merchant.id, customerId: customer.id, paymentId: payment.id };
}

/**
 * Rows `from`..`to` (1-based) of the seed: payments with ids `pt_<base + g>`, each with its event
 * and one delivery. `customerOf` is the SQL for a row's customer; `ageSql` its created_at.
 */
async function seedRows(
  db: Db,
  template: Template,
  endpointId: string,
  rows: { from: number; to: number; base: string; customerSql: string; createdSql: string },
): Promise<void> {
  const series = `generate_series(${rows.from}, ${rows.to}) AS g`;
  const id = (prefix: string) => `'${prefix}_' || (${rows.base}::bigint + g)::text`;
  await db.query(
    `INSERT INTO payments
     SELECT (jsonb_populate_record(NULL::payments, to_jsonb(t) || jsonb_build_object(
       'id', ${id('pt')}, 'customer_id', ${rows.customerSql}, 'created_at', ${rows.createdSql},
       'updated_at', ${rows.createdSql}, 'order_no', NULL))).*
     FROM payments t, ${series} WHERE t.id = $1`,
    [template.paymentId],
  );
  await db.query(
    `INSERT INTO events (id, merchant_id, mode, type, object_id, body, created_at)
     SELECT ${id('evt')}, t.merchant_id, t.mode, t.type, ${id('pt')}, t.body, ${rows.createdSql}
     FROM (SELECT * FROM events WHERE object_id = $1 ORDER BY created_at LIMIT 1) t, ${series}`,
    [template.paymentId],
  );
  await db.query(
    // No body: since migration 0180 a delivery sends the one made from its event (decision 0035).
    `INSERT INTO webhook_deliveries (id, event_id, merchant_id, mode, endpoint_id, url, kind, status, attempts,
       next_attempt_at, last_attempt_at, created_at, updated_at)
     SELECT ${id('wd')}, ${id('evt')}, $1, 'test', $2, 'https://example.com/hook', 'endpoint', 'succeeded', 1,
       NULL, ${rows.createdSql}, ${rows.createdSql}, ${rows.createdSql}
     FROM ${series}`,
    [template.merchantId, endpointId],
  );
}

const otherCustomers = 1000;

/** The endpoint the seeded deliveries name, the other customers, and the first `small` rows. */
async function seedSmall(db: Db, template: Template, small: number): Promise<string> {
  if (db.kind === 'postgres') {
    for (const table of ['payments', 'events', 'webhook_deliveries', 'customers']) {
      await db.query(`ALTER TABLE ${table} SET (autovacuum_enabled = false)`);
    }
  }
  const endpointId = 'we_2000000000000000001';
  await db.query(
    `INSERT INTO webhook_endpoints (id, merchant_id, mode, kind, url, enabled_events, legacy_notifications, status,
       token_encrypted, created_at, updated_at)
     VALUES ($1, $2, 'test', 'static', 'https://example.com/hook', '["*"]', false, 'disabled', 'unused', now(), now())`,
    [endpointId, template.merchantId],
  );
  await db.query(
    `INSERT INTO customers
     SELECT (jsonb_populate_record(NULL::customers, to_jsonb(t) || jsonb_build_object(
       'id', 'cus_' || (2000000000000000000::bigint + g)::text, 'merchant_user_id', NULL))).*
     FROM customers t, generate_series(1, ${otherCustomers}) AS g WHERE t.id = $1`,
    [template.customerId],
  );
  // The small size: the template customer's payments, two days old (the oldest rows of all).
  await seedRows(db, template, endpointId, {
    from: 1,
    to: small - 1,
    base: '2000000000000000000',
    customerSql: `'${template.customerId}'`,
    createdSql: `(now() - interval '2 days' + g * interval '1 ms')`,
  });
  return endpointId;
}

async function seedBig(db: Db, template: Template, endpointId: string, small: number, big: number): Promise<void> {
  const chunk = 100_000;
  for (let from = 1; from <= big - small; from += chunk) {
    const to = Math.min(big - small, from + chunk - 1);
    await seedRows(db, template, endpointId, {
      from,
      to,
      base: '3000000000000000000',
      customerSql: `'cus_' || (2000000000000000001::bigint + g % ${otherCustomers})::text`,
      createdSql: `(now() - interval '1 day' + g * interval '10 ms')`,
    });
  }
}

async function withDb<T>(database: GrowthTarget['database'], work: (db: Db) => Promise<T>): Promise<T> {
  const db = await openDb({ ...database, poolSize: 2 });
  try {
    return await work(db);
  } finally {
    await db.close();
  }
}

function percentile(sorted: number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)]!;
}

/** Each path `count` times, one request at a time, after `count / 5` unmeasured ones. */
async function timeQueries(
  baseUrl: string,
  key: string,
  paths: Array<{ name: string; path: string }>,
  count: number,
): Promise<Array<{ p50Ms: number; p99Ms: number }>> {
  const pool = new Pool(baseUrl, { connections: 1 });
  try {
    const results = [];
    for (const { path } of paths) {
      const times: number[] = [];
      for (let i = -Math.ceil(count / 5); i < count; i += 1) {
        const started = performance.now();
        const response = await pool.request({
          method: 'GET',
          path: `${apiBase}${path}`,
          headers: { authorization: `Bearer ${key}` },
        });
        const body = await response.body.text();
        if (response.statusCode !== 200 || !body.startsWith('{"code":"success"')) {
          throw new Error(`GET ${path} answered HTTP ${response.statusCode}: ${body.slice(0, 300)}`);
        }
        if (i >= 0) times.push(performance.now() - started);
      }
      times.sort((a, b) => a - b);
      results.push({ p50Ms: percentile(times, 0.5), p99Ms: percentile(times, 0.99) });
    }
    return results;
  } finally {
    await pool.close();
  }
}

/** The scan lines of EXPLAIN ANALYZE (which index, how many rows read and filtered out). */
async function scansOf(db: Db, sql: string): Promise<string> {
  const rows = await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) ${sql}`);
  return rows
    .map((row) => row['QUERY PLAN'].trim().replace(/^->\s*/, ''))
    .filter((line) => /Scan|Rows Removed|Sort Method/.test(line))
    .join('; ');
}

export async function runGrowth(
  target: GrowthTarget,
  options: { bigRows: number; requests: number; progress: (text: string) => void },
): Promise<GrowthResult> {
  const small = 1000;
  if (options.bigRows <= small) throw new Error(`--growth-rows must be more than ${small}`);
  const baseUrl = await target.start();
  const template = await makeTemplate(baseUrl, target.adminKey);
  await target.stop();

  const firstSeeded = (prefix: string) => `${prefix}_${2000000000000000000n + 1n}`;
  const scope = `merchant_id = '${template.merchantId}' AND mode = 'test'`;
  const page = 'ORDER BY created_at DESC, id DESC LIMIT 11';
  // Each path, and the list statement behind it as the service writes it (for EXPLAIN).
  const paths = [
    { name: 'GET /payment (first page)', path: '/payment', sql: `SELECT * FROM payments WHERE ${scope} ${page}` },
    {
      name: 'GET /payment?customerId=',
      path: `/payment?customerId=${template.customerId}`,
      sql: `SELECT * FROM payments WHERE ${scope} AND customer_id = '${template.customerId}' ${page}`,
    },
    {
      name: 'GET /events?objectId=',
      path: `/events?objectId=${firstSeeded('pt')}`,
      sql: `SELECT * FROM events WHERE ${scope} AND object_id = '${firstSeeded('pt')}' ${page}`,
    },
    {
      // The event's attempts, as selectEventAttempts in src/webhooks/deliveries/queries.ts writes them.
      name: 'GET /events/{id}/deliveries',
      path: `/events/${firstSeeded('evt')}/deliveries`,
      sql:
        `SELECT a.* FROM (SELECT * FROM webhook_deliveries WHERE event_id = '${firstSeeded('evt')}' OFFSET 0) d ` +
        `JOIN webhook_attempts a ON a.delivery_id = d.id WHERE d.merchant_id = '${template.merchantId}' AND d.mode = 'test' ` +
        `ORDER BY a.attempted_at, a.delivery_id, a.attempt_number LIMIT 1001`,
    },
  ];

  options.progress(`growth: seeding ${small.toLocaleString('en')} payments`);
  const endpointId = await withDb(target.database, (db) => seedSmall(db, template, small));
  const smallTimes = await timeQueries(await target.start(), template.privateKey, paths, options.requests);
  await target.stop();

  options.progress(
    `growth: seeding up to ${options.bigRows.toLocaleString('en')} payments (events and deliveries too)`,
  );
  const seedStarted = performance.now();
  await withDb(target.database, (db) => seedBig(db, template, endpointId, small, options.bigRows));
  const seedSeconds = (performance.now() - seedStarted) / 1000;
  const bigTimes = await timeQueries(await target.start(), template.privateKey, paths, options.requests);
  await target.stop();
  const plans = await withDb(target.database, (db) => Promise.all(paths.map((query) => scansOf(db, query.sql))));

  return {
    smallRows: small,
    bigRows: options.bigRows,
    seedSeconds,
    queries: paths.map((query, index) => ({
      name: query.name,
      small: smallTimes[index]!,
      big: bigTimes[index]!,
      ratio: bigTimes[index]!.p50Ms / smallTimes[index]!.p50Ms,
      plan: plans[index]!,
    })),
  };
}
