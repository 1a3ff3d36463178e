import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { verifyWebhook } from '../sdk/verify-webhook.js';
import { databaseKind, storeIndependent, migratedStorage, type TestStorage } from './helpers/harness.js';
import {
  apiCaller,
  runCli,
  spawnCli,
  startService,
  stopService,
  type LongRunningCli,
  type RunningService,
} from './helpers/cli-process.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';

describe(`tessera listen against a started service (${databaseKind})`, { skip: storeIndependent }, () => {
  let storage: TestStorage | undefined;
  let running: RunningService;
  let call: ReturnType<typeof apiCaller>;
  let cliEnv: Record<string, string>;
  const receivers: Receiver[] = [];
  const listeners: LongRunningCli[] = [];

  before(async () => {
    storage = await migratedStorage('tessera-listen-');
    running = await startService({ ...storage.env });
    call = apiCaller(running);
    cliEnv = { TESSERA_URL: running.origin, TESSERA_API_KEY: running.privateKey };
  });
  after(async () => {
    // The service stops while streams are open (it ends them), then the listeners stop on Ctrl-C.
    await stopService(running);
    const exitCodes = await Promise.all(listeners.map((listener) => listener.stop()));
    // Closed before the exit codes are judged: an open receiver would keep this file's process
    // alive after a failure until the test runner's timeout.
    await Promise.all(receivers.map((receiver) => receiver.close()));
    await storage?.remove();
    assert.deepEqual(
      exitCodes,
      listeners.map(() => 0),
    );
  });

  /** A receiver that answers `success` only to a notification that verifies with `token()`. */
  async function verifyingReceiver(token: () => string): Promise<Receiver> {
    const receiver = await startReceiver((request) => {
      try {
        verifyWebhook({ headers: request.headers, rawBody: request.rawBody, token: token() });
        return { status: 200, body: 'success' };
      } catch (err) {
        return { status: 401, body: (err as Error).message };
      }
    });
    receivers.push(receiver);
    return receiver;
  }

  async function listen(receiver: Receiver, ...args: string[]): Promise<{ cli: LongRunningCli; token: string }> {
    const cli = spawnCli(['listen', '--forward-to', receiver.url(), ...args], cliEnv);
    listeners.push(cli);
    const [, token] = await cli.waitFor(/Webhook token for this session: (whsec_\w+)/);
    await cli.waitFor(/^Ready$/m);
    return { cli, token: token! };
  }

  async function pay(cardNo: string) {
    const method = await call('/payment_methods/create', {
      type: 'card',
      card: { cardNo, expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    return call('/payment/create', { amount: '1999', currency: 'USD', paymentMethod: method.id, confirm: 'true' });
  }

  test('forwards a real payment event signed with the printed session token, one line per forward', async () => {
    let token = '';
    const receiver = await verifyingReceiver(() => token);
    const session = await listen(receiver);
    token = session.token;

    const payment = await pay('4242424242424242');
    assert.equal(payment.status, 'succeeded');
    const [request] = await receiver.waitFor(1);
    const event = verifyWebhook({ headers: request!.headers, rawBody: request!.rawBody, token });
    assert.equal(event.type, 'endpoint_payment.payment_succeeded');
    assert.equal((event.data as { id: string }).id, payment.id);
    assert.equal(receiver.rawHeader(request!, 'Request-Time')?.length, 19);
    assert.match(receiver.rawHeader(request!, 'Signature') ?? '', /^[0-9A-F]{64}$/);
    // The body forwarded is the one the service stores and delivers, byte for byte.
    const stored = await call(`/events/${event.id}`);
    assert.deepEqual(JSON.parse(request!.body).data, stored.data);

    const line = await session.cli.waitFor(
      new RegExp(`^(\\S+Z)  payment\\.succeeded  ${event.id}  200  (\\d+) ms$`, 'm'),
    );
    assert.ok(!Number.isNaN(Date.parse(line[1]!)));
  });

  test('--events forwards only the codes asked for, named as the API takes them (any letter case)', async () => {
    let token = '';
    const receiver = await verifyingReceiver(() => token);
    const session = await listen(receiver, '--events', 'Payment.Failed');
    token = session.token;

    await pay('4242424242424242');
    const declined = await pay('4000000000000002');
    assert.equal(declined.status, 'failed');
    const [request] = await receiver.waitFor(1);
    assert.equal(JSON.parse(request!.body).type, 'endpoint_payment.payment_failed');
    await session.cli.waitFor(/ {2}payment\.failed {2}evt_\d{19} {2}200 {2}\d+ ms$/m);
    // A later event that is forwarded: the stream is in order, so the payment.succeeded before it
    // would have come first, had it been forwarded.
    await pay('4000000000000002');
    await receiver.waitFor(2);
    await session.cli.waitFor(/(?: {2}payment\.failed {2}evt_\d{19} {2}200 {2}\d+ ms\n[^]*){2}/);
    assert.deepEqual(
      receiver.requests.map((forwarded) => JSON.parse(forwarded.body).type),
      ['endpoint_payment.payment_failed', 'endpoint_payment.payment_failed'],
    );
    assert.doesNotMatch(session.cli.output(), /payment\.succeeded {2}evt_/);
  });

  test('an answer other than success is printed with its status', async () => {
    const receiver = await startReceiver(() => ({ status: 500, body: 'oops' }));
    receivers.push(receiver);
    const session = await listen(receiver, '--events', 'payment.succeeded');
    await pay('4242424242424242');
    await session.cli.waitFor(/ {2}payment\.succeeded {2}evt_\d{19} {2}500 \(not "success"\) {2}\d+ ms$/m);
  });

  test(
    'a lost LISTEN connection is opened again by itself: the stream goes on with the next events',
    { skip: databaseKind === 'postgres' ? false : 'PGlite has no connection to lose' },
    async () => {
      const receiver = await startReceiver(() => ({ status: 200, body: 'success' }));
      receivers.push(receiver);
      const session = await listen(receiver, '--events', 'payment.succeeded');
      const admin = new pg.Client({ connectionString: storage!.databaseUrl! });
      await admin.connect();
      const listening = async () =>
        (
          await admin.query<{ pid: number }>(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %'",
          )
        ).rows.map((row) => row.pid);
      try {
        const [lost] = await listening();
        assert.ok(lost, 'the service LISTENs while a stream is open');
        await admin.query('SELECT pg_terminate_backend($1)', [lost]);
        // Opened again after 0.5 s (then backing off), by the service alone.
        for (let tries = 0; ; tries++) {
          const now = await listening();
          if (now.length === 1 && now[0] !== lost) break;
          assert.ok(tries < 100, 'listening again within 10 s');
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        const payment = await pay('4242424242424242');
        const [request] = await receiver.waitFor(1);
        assert.equal(JSON.parse(request!.body).data.id, payment.id);
        await session.cli.waitFor(/ {2}payment\.succeeded {2}evt_\d{19} {2}200 {2}\d+ ms$/m);
      } finally {
        await admin.end();
      }
    },
  );

  test('reads a stream whose lines end in CRLF or CR, split anywhere, with data over several lines', async () => {
    // The server-sent events format allows all three line ends; a stream through another server
    // (a proxy, a test double like this one) need not use Tessera's LF.
    const chunks = [
      ': a comment\r\nid: evt_1\r\nevent: payment.succeeded\r\ndata: {"a":1,\r',
      '\ndata: "b":2}\r\n\r\n',
      'id: evt_2\revent: payment.failed\rdata: {"c":3}\r\r',
    ];
    const stream = createServer((request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      // One chunk at a time, so that the CRLF split across the first two arrives in two reads.
      chunks.forEach((chunk, index) => setTimeout(() => response.write(chunk), 100 * (index + 1)));
    });
    await new Promise<void>((resolve) => stream.listen(0, '127.0.0.1', resolve));
    const receiver = await startReceiver(() => ({ status: 200, body: 'success' }));
    receivers.push(receiver);
    const { port } = stream.address() as AddressInfo;
    const cli = spawnCli(['listen', '--forward-to', receiver.url()], {
      TESSERA_URL: `http://127.0.0.1:${port}`,
      TESSERA_API_KEY: 'test_pr_stream_double',
    });
    listeners.push(cli);
    try {
      // The wait includes the start of the `tessera listen` process, which on a busy machine takes seconds.
      const requests = await receiver.waitFor(2, 30_000);
      assert.deepEqual(
        requests.map((request) => request.body),
        ['{"a":1,\n"b":2}', '{"c":3}'],
      );
      await cli.waitFor(/ {2}payment\.succeeded {2}evt_1 {2}200 {2}\d+ ms$/m);
      await cli.waitFor(/ {2}payment\.failed {2}evt_2 {2}200 {2}\d+ ms$/m);
    } finally {
      stream.closeAllConnections();
      stream.close();
    }
  });

  test('the stream refuses an unknown event code naming types, and a wrong key', async () => {
    const response = await fetch(`${running.baseUrl}/events/stream?types=payment.succeeded,payment.done`, {
      headers: { authorization: `Bearer ${running.privateKey}` },
    });
    assert.equal(response.status, 400);
    const body = (await response.json()) as { code: string; msg: string; data: { param: string } };
    assert.equal(body.code, 'invalid_request');
    assert.equal(body.data.param, 'types');
    assert.match(body.msg, /'payment\.done' is not one/);

    const wrongKey = await runCli(['listen', '--forward-to', 'http://127.0.0.1:9/x', '--key', 'test_pr_nope'], {
      TESSERA_URL: running.origin,
    });
    assert.equal(wrongKey.code, 1);
    assert.match(wrongKey.stderr, /^tessera: authentication_error: /m);

    const badFilter = await runCli(['listen', '--forward-to', 'http://127.0.0.1:9/x', '--events', 'nope'], cliEnv);
    assert.equal(badFilter.code, 1);
    assert.match(badFilter.stderr, /--events: 'nope' is not an event code/);
  });
});
