/**
 * The SDK as a merchant gets it: `npm pack` in sdk/, the tarball installed into an empty project,
 * and plain `node` running the quickstart (ESM), the CommonJS example and scripts of the methods
 * they do not call (checkout sessions, revealToken, recover, sendingAddresses, events.stream)
 * against a started service. A broken package (exports, build, types generation, a runtime
 * dependency) fails here.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createTestDatabase, databaseKind, storeIndependent } from './helpers/harness.js';
import { apiCaller, startService, stopService, type RunningService } from './helpers/cli-process.js';

const run = promisify(execFile);
const sdkDir = path.resolve('sdk');

describe(`the SDK package from its tarball in an empty project (${databaseKind})`, { skip: storeIndependent }, () => {
  let workDir: string;
  let projectDir: string;
  let tarball: string;
  let database: { url: string; drop(): Promise<void> } | undefined;
  let running: RunningService;

  /** Runs a script of the project with plain node, as a merchant would. */
  const node = async (script: string, env: Record<string, string> = {}) => {
    const { stdout } = await run(process.execPath, [script], {
      cwd: projectDir,
      env: { PATH: process.env.PATH ?? '', TESSERA_URL: running.origin, TESSERA_API_KEY: running.privateKey, ...env },
      timeout: 60_000,
    });
    return stdout;
  };

  before(async () => {
    workDir = mkdtempSync(path.join(tmpdir(), 'tessera-sdk-'));
    projectDir = path.join(workDir, 'merchant-app');
    database = databaseKind === 'postgres' ? await createTestDatabase() : undefined;
    const [, service] = await Promise.all([
      (async () => {
        // prepack builds the SDK (types generated from the OpenAPI document, ESM and CJS) when stale.
        await run('npm', ['pack', '--pack-destination', workDir], { cwd: sdkDir, timeout: 240_000 });
        tarball = readdirSync(workDir).find((name) => name.endsWith('.tgz'))!;
        await run('mkdir', [projectDir]);
        writeFileSync(path.join(projectDir, 'package.json'), '{ "name": "merchant-app", "private": true }\n');
        await run('npm', ['install', path.join(workDir, tarball), '--no-audit', '--no-fund', '--offline'], {
          cwd: projectDir,
          timeout: 120_000,
        });
        for (const example of ['quickstart.mjs', 'require.cjs']) {
          copyFileSync(path.join(sdkDir, 'examples', example), path.join(projectDir, example));
        }
      })(),
      startService({
        TESSERA_DATA_DIR: path.join(workDir, 'data'),
        ...(database ? { DATABASE_URL: database.url } : {}),
      }),
    ]);
    running = service;
  });
  after(async () => {
    if (running) await stopService(running);
    rmSync(workDir, { recursive: true, force: true });
    await database?.drop();
  });

  test('the tarball holds the built package only, with ESM, CJS and types, and no runtime dependency', async () => {
    assert.match(tarball, /^tessera-node-\d+\.\d+\.\d+\.tgz$/);
    const { stdout } = await run('tar', ['-tzf', path.join(workDir, tarball)]);
    const files = stdout.trim().split('\n');
    for (const file of ['package.json', 'dist/esm/index.js', 'dist/esm/index.d.ts', 'dist/cjs/index.js']) {
      assert.ok(files.includes(`package/${file}`), `${file} is packed`);
    }
    assert.ok(files.includes('package/dist/esm/generated/openapi.d.ts'), 'the generated API types are packed');
    assert.deepEqual(
      files.filter((file) => !/^package\/(dist\/|package\.json$|README\.md$)/.test(file)),
      [],
      'nothing but dist/, package.json and README.md',
    );
    const installed = JSON.parse(
      readFileSync(path.join(projectDir, 'node_modules/@tessera/node/package.json'), 'utf8'),
    ) as Record<string, unknown>;
    assert.equal(installed.dependencies, undefined);
    const packages = readdirSync(path.join(projectDir, 'node_modules')).filter((name) => !name.startsWith('.'));
    assert.deepEqual(packages, ['@tessera'], 'nothing else installed');
  });

  test('the ESM quickstart runs: storing payment, MIT, refund, a 400 as TesseraError, verified webhooks, and deletes its endpoint', async () => {
    const output = await node('quickstart.mjs');
    const storing = /^storing payment (pt_\d{19}) succeeded$/m.exec(output);
    const mit = /^MIT payment (pt_\d{19}) succeeded$/m.exec(output);
    assert.ok(storing && mit, output);
    assert.match(output, /^refund re_\d{19} pending$/m);
    // status, code, param and X-TraceId of the refusal, as the TesseraError carries them.
    assert.match(output, /^refused 400 invalid_request amount [0-9a-f]{24}$/m);
    const webhooks = [...output.matchAll(/^webhook endpoint_payment\.payment_succeeded (pt_\d{19})$/gm)];
    assert.deepEqual(
      webhooks.map((webhook) => webhook[1]),
      [storing[1], mit[1]],
      output,
    );

    // It removes what it made that would keep working: its endpoint is gone, and no delivery waits
    // for the port it listened on (issue 21: runs of the quickstart once left dozens pending).
    const deleted = /^deleted (we_\d+)$/m.exec(output);
    assert.ok(deleted, output);
    const call = apiCaller(running);
    const endpoints = (await call('/webhook_endpoints?limit=100')) as { data: Array<{ id: string; kind: string }> };
    assert.deepEqual(
      endpoints.data.filter((endpoint) => endpoint.kind === 'static'),
      [],
      'no endpoint left',
    );
    await assert.rejects(call(`/webhook_endpoints/${deleted[1]}`), /resource_missing/);
    // The script saw both answers; the service records each a moment after the receiver answers.
    const deadline = Date.now() + 10_000;
    let statuses: string[];
    do {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const sent = (await call('/webhook_deliveries?limit=100')) as {
        data: Array<{ endpointId: string; status: string }>;
      };
      statuses = sent.data.filter((delivery) => delivery.endpointId === deleted[1]).map((delivery) => delivery.status);
    } while (statuses.includes('pending') && Date.now() < deadline);
    assert.deepEqual(statuses, ['succeeded', 'succeeded'], 'both payments delivered, nothing else planned for it');
    const pending = (await call('/webhook_deliveries?limit=100&status=pending')) as { data: unknown[] };
    assert.deepEqual(pending.data, [], 'no delivery pending');

    // The objects are real: the service answers the MIT payment as made on the stored card.
    const payment = await call(`/payment/${mit[1]}`);
    assert.equal(payment.subsequentInitialType, 'mit');
    assert.equal(payment.amount, '500');
  });

  test('require() of the package and of its /webhook entry works from CommonJS', async () => {
    const output = await node('require.cjs');
    assert.match(output, /^customer cus_\d{19}$/m);
    assert.match(output, /^refused 404 resource_missing id [0-9a-f]{24}$/m);
    assert.match(output, /^verifyWebhook function$/m);
  });

  test('the guides show the examples as run here, and import only what the package exports', async () => {
    const sdkGuide = readFileSync('docs/sdk.md', 'utf8');
    for (const example of ['quickstart.mjs', 'require.cjs']) {
      const source = readFileSync(path.join(sdkDir, 'examples', example), 'utf8');
      assert.ok(sdkGuide.includes(`\`\`\`js\n${source}\`\`\``), `docs/sdk.md shows sdk/examples/${example} verbatim`);
    }
    // Every `import { … } from '@tessera/node…'` of the guides names exports of the installed package.
    const imports = [sdkGuide, readFileSync('docs/webhooks.md', 'utf8')].flatMap((text) =>
      [...text.matchAll(/import \{([^}]+)\} from '(@tessera\/node[^']*)'/g)].map(([, names, from]) => ({
        from: from!,
        names: names!.split(',').map((name) => name.trim()),
      })),
    );
    assert.ok(
      imports.some(({ names }) => names.includes('WebhookVerificationError')),
      'the receiver imports',
    );
    writeFileSync(
      path.join(projectDir, 'imports.mjs'),
      imports
        .map(
          ({ from, names }, i) =>
            `import * as m${i} from '${from}';\nconsole.log(${JSON.stringify(names)}.filter((n) => !(n in m${i})).join());\n`,
        )
        .join(''),
    );
    assert.equal((await node('imports.mjs')).trim().replace(/\n+/g, ''), '', 'no missing export');
  });

  test('retries a network error and a 5xx with the same Idempotency-Key, and never a 4xx', async () => {
    const proxy = await startFlakyProxy(running.origin);
    try {
      writeFileSync(path.join(projectDir, 'retries.mjs'), retriesScript);
      const output = await node('retries.mjs', { TESSERA_URL: proxy.url });
      assert.match(output, /^created cus_\d{19}$/m);
      assert.match(output, /^refused 400 invalid_request email$/m);
      assert.match(output, /^gave up 500 internal_error -$/m);

      const creates = proxy.seen.filter((seen) => seen.path.endsWith('/customers/create'));
      assert.equal(creates.length, 3 + 1, 'dropped, 503, forwarded; then the refused one once');
      const [dropped, unavailable, forwarded, refused] = creates;
      assert.ok(dropped!.key && dropped!.key.length > 0, 'a POST carries an Idempotency-Key');
      assert.equal(unavailable!.key, dropped!.key, 'a retry reuses the key of its call');
      assert.equal(forwarded!.key, dropped!.key);
      assert.notEqual(refused!.key, dropped!.key, 'another call gets another key');
      const reads = proxy.seen.filter((seen) => seen.path.includes('/customers/cus_'));
      assert.equal(reads.length, 3, 'a 5xx is retried twice (maxRetries 2), then surfaces');
    } finally {
      await proxy.close();
    }
  });

  test('checkoutSessions: create, retrieve, list and expire a session; expiring it again is refused', async () => {
    writeFileSync(path.join(projectDir, 'checkout.mjs'), checkoutScript);
    const output = await node('checkout.mjs');
    const created = /^created (cs_\d{19}) open (\S+)$/m.exec(output);
    assert.ok(created, output);
    assert.match(created[2]!, new RegExp(`/checkout/${created[1]}$`));
    assert.match(output, new RegExp(`^retrieved ${created[1]} open$`, 'm'));
    assert.match(output, /^listed true$/m);
    assert.match(output, new RegExp(`^expired ${created[1]} expired$`, 'm'));
    assert.match(output, /^refused 400 invalid_state$/m);
  });

  test('webhookEndpoints: revealToken answers the token, recover sends what a disabled endpoint missed, sendingAddresses answers', async () => {
    writeFileSync(path.join(projectDir, 'recover.mjs'), recoverScript);
    const output = await node('recover.mjs');
    assert.match(output, /^revealed true$/m);
    assert.match(output, /^recovered 1 event\(s\), 1 new delivery$/m);
    assert.match(output, /^received endpoint_invoice\.invoice_created of the invoice made while disabled$/m);
    assert.match(output, /^sending addresses sending_addresses false 0$/m);
    const deleted = /^deleted (we_\d+)$/m.exec(output);
    assert.ok(deleted, output);
    await assert.rejects(apiCaller(running)(`/webhook_endpoints/${deleted[1]}`), /resource_missing/);
  });

  test('events.stream yields each event as it happens, ends when its signal aborts, and throws a refusal as TesseraError', async () => {
    writeFileSync(path.join(projectDir, 'stream.mjs'), streamScript);
    const output = await node('stream.mjs');
    assert.match(output, /^streamed invoice\.created endpoint_invoice\.invoice_created of an invoice made here$/m);
    assert.match(output, /^after abort done$/m);
    assert.match(output, /^refused 400 invalid_request types$/m);
  });
});

/** Run in the project: the checkout session operations. */
const checkoutScript = `import { randomUUID } from 'node:crypto';
import { Tessera, TesseraError } from '@tessera/node';
const tessera = new Tessera({ apiKey: process.env.TESSERA_API_KEY, baseUrl: process.env.TESSERA_URL });
const session = await tessera.checkoutSessions.create({
  amountTotal: '2598',
  currency: 'USD',
  orderNo: randomUUID(),
  lineItems: [{ name: 'T-shirt', amount: 12.99, currency: 'USD', quantity: 2 }],
  returnUrl: 'https://shop.example.com/checkout/done',
  cancelUrl: 'https://shop.example.com/cart',
});
console.log('created', session.id, session.status, session.url);
const read = await tessera.checkoutSessions.retrieve(session.id);
console.log('retrieved', read.id, read.status);
const listed = await tessera.checkoutSessions.list({ limit: 100 });
console.log('listed', listed.data.some((other) => other.id === session.id));
const expired = await tessera.checkoutSessions.expire(session.id);
console.log('expired', expired.id, expired.status);
try {
  await tessera.checkoutSessions.expire(session.id);
} catch (err) {
  if (!(err instanceof TesseraError)) throw err;
  console.log('refused', err.status, err.code);
}
`;

/**
 * Run in the project: an endpoint whose token is revealed, disabled while an invoice is made, then
 * enabled and recovered, so that the invoice's event comes (verified) to its receiver; deleted at the end.
 */
const recoverScript = `import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { Tessera, verifyWebhook } from '@tessera/node';
const tessera = new Tessera({ apiKey: process.env.TESSERA_API_KEY, baseUrl: process.env.TESSERA_URL });
let token;
let arrived;
const received = new Promise((resolve) => (arrived = resolve));
const receiver = createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    try {
      arrived(verifyWebhook({ headers: req.headers, rawBody: Buffer.concat(chunks), token }));
      res.end('success');
    } catch {
      res.statusCode = 400;
      res.end('rejected');
    }
  });
});
await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const endpoint = await tessera.webhookEndpoints.create({
  url: \`http://127.0.0.1:\${receiver.address().port}/webhooks\`,
  enabledEvents: ['invoice.created'],
});
token = (await tessera.webhookEndpoints.revealToken(endpoint.id)).token;
console.log('revealed', token === endpoint.token);
await tessera.webhookEndpoints.update(endpoint.id, { status: 'disabled' });
const customer = await tessera.customers.create({ email: 'ada@example.com', merchantUserId: randomUUID() });
const invoice = await tessera.invoices.create({
  customerId: customer.id,
  currency: 'USD',
  collectionMethod: 'send_invoice',
  daysUntilDue: 30,
  lineItems: [{ description: 'Consulting, March', amount: '150000', quantity: 1 }],
});
await tessera.webhookEndpoints.update(endpoint.id, { status: 'enabled' });
const recovery = await tessera.webhookEndpoints.recover(endpoint.id, { since: endpoint.created });
console.log('recovered', recovery.events, 'event(s),', recovery.deliveriesCreated, 'new delivery');
const event = await received;
console.log('received', event.type, event.data.id === invoice.id ? 'of the invoice made while disabled' : event.data.id);
const addresses = await tessera.webhookEndpoints.sendingAddresses();
console.log('sending addresses', addresses.object, addresses.fixed, addresses.addresses.length);
await tessera.webhookEndpoints.del(endpoint.id);
console.log('deleted', endpoint.id);
receiver.close();
`;

/**
 * Run in the project: the stream of invoice.created events. The stream says nothing when it is
 * connected, so invoices are made until the first of their events comes through it.
 */
const streamScript = `import { randomUUID } from 'node:crypto';
import { Tessera, TesseraError } from '@tessera/node';
const tessera = new Tessera({ apiKey: process.env.TESSERA_API_KEY, baseUrl: process.env.TESSERA_URL });
const customer = await tessera.customers.create({ email: 'ada@example.com', merchantUserId: randomUUID() });
const stop = new AbortController();
const events = tessera.events.stream({ types: 'invoice.created' }, { signal: stop.signal });
const first = events.next();
const made = new Set();
let event;
for (let i = 0; i < 40 && !event; i++) {
  const invoice = await tessera.invoices.create({
    customerId: customer.id,
    currency: 'USD',
    collectionMethod: 'send_invoice',
    daysUntilDue: 30,
    lineItems: [{ description: 'Consulting, March', amount: '150000', quantity: 1 }],
  });
  made.add(invoice.id);
  event = await Promise.race([first.then((next) => next.value), new Promise((resolve) => setTimeout(resolve, 250))]);
}
const listed = await tessera.events.retrieve(event.id);
console.log('streamed', listed.type, event.type, made.has(event.data.id) ? 'of an invoice made here' : event.data.id);
stop.abort();
console.log('after abort', (await events.next()).done ? 'done' : 'not done');
try {
  for await (const _ of tessera.events.stream({ types: 'invoice.creatd' })) break;
} catch (err) {
  if (!(err instanceof TesseraError)) throw err;
  console.log('refused', err.status, err.code, err.param);
}
`;

/** Run in the project: calls through the flaky proxy, with short retry delays. */
const retriesScript = `import { Tessera, TesseraError } from '@tessera/node';
const tessera = new Tessera({ apiKey: process.env.TESSERA_API_KEY, baseUrl: process.env.TESSERA_URL, retryDelayMs: 10 });
const customer = await tessera.customers.create({ firstName: 'Retried' });
console.log('created', customer.id);
for (const call of [
  () => tessera.customers.create({ email: 'not an address' }),
  () => tessera.customers.retrieve('cus_0000000000000000001'),
]) {
  try {
    await call();
  } catch (err) {
    if (!(err instanceof TesseraError)) throw err;
    console.log(err.status === 500 ? 'gave up' : 'refused', err.status, err.code, err.param ?? '-');
  }
}
`;

interface FlakyProxy {
  url: string;
  seen: Array<{ method: string; path: string; key: string | undefined }>;
  close(): Promise<void>;
}

/**
 * In front of the service: the first customer creation loses its connection, the second is
 * answered 503, later ones are forwarded; reading a customer is always answered 500.
 */
async function startFlakyProxy(target: string): Promise<FlakyProxy> {
  const seen: FlakyProxy['seen'] = [];
  const server: Server = createServer((req, res) => {
    const entry = { method: req.method!, path: req.url!, key: req.headers['idempotency-key'] as string | undefined };
    seen.push(entry);
    const creates = seen.filter((other) => other.path.endsWith('/customers/create')).length;
    if (entry.path.endsWith('/customers/create') && creates === 1) return req.socket.destroy();
    const envelope = (status: number, code: string) => {
      res.writeHead(status, { 'content-type': 'application/json', 'x-traceid': 'f'.repeat(24) });
      res.end(JSON.stringify({ code, msg: 'the proxy says so', data: null }));
    };
    if (entry.path.endsWith('/customers/create') && creates === 2) return envelope(503, 'internal_error');
    if (entry.path.includes('/customers/cus_')) return envelope(500, 'internal_error');
    forward(req, res, target);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function forward(req: IncomingMessage, res: import('node:http').ServerResponse, target: string): void {
  const upstream = httpRequest(new URL(req.url!, target), { method: req.method, headers: req.headers }, (answer) => {
    res.writeHead(answer.statusCode!, answer.headers);
    answer.pipe(res);
  });
  req.pipe(upstream);
}
