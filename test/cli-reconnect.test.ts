import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { databaseKind, storeIndependent, migratedStorage, type TestStorage } from './helpers/harness.js';
import {
  apiCaller,
  payWithEndpoint,
  runCli,
  spawnCli,
  startService,
  stopService,
  type LongRunningCli,
  type RunningService,
} from './helpers/cli-process.js';
import { refusingUrl, startReceiver, type Receiver } from './helpers/receiver.js';

/**
 * `tessera deliveries tail` and `tessera listen` against a real service process that is stopped
 * and started again on the same port and database: they stay up, say that they reconnect, and
 * carry on; a service that is not running at all is named as such (issue 21 item 3).
 */
describe(`tail and listen live through a restart of the service (${databaseKind})`, { skip: storeIndependent }, () => {
  let storage: TestStorage | undefined;
  let env: Record<string, string>;
  let running: RunningService | undefined;
  const receivers: Receiver[] = [];
  const commands: LongRunningCli[] = [];

  before(async () => {
    storage = await migratedStorage('tessera-reconnect-');
    env = { ...storage.env };
  });
  after(async () => {
    await Promise.all(commands.map((command) => command.stop()));
    if (running) await stopService(running);
    await Promise.all(receivers.map((receiver) => receiver.close()));
    await storage?.remove();
  });

  test('a refused connection is named, with the address and what to start, never "fetch failed"', async () => {
    const url = new URL(await refusingUrl()).origin;
    const cliEnv = { TESSERA_URL: url, TESSERA_API_KEY: 'test_pr_whatever' };
    for (const args of [
      ['deliveries', 'tail'],
      ['listen', '--forward-to', 'http://127.0.0.1:9/webhooks'],
      ['events', 'list'],
      ['webhooks', 'list'],
    ]) {
      const result = await runCli(args, cliEnv);
      assert.equal(result.code, 1, args.join(' '));
      assert.equal(
        result.stderr,
        `tessera: could not connect to ${url} (connection refused) — is \`tessera start\` running?\n`,
        args.join(' '),
      );
    }
    const operator = await runCli(['merchants', 'list'], { TESSERA_URL: url, TESSERA_ADMIN_KEY: 'x'.repeat(32) });
    assert.equal(operator.code, 1);
    assert.match(operator.stderr, /could not connect to .* \(connection refused\) — is `tessera start` running\?/);
    assert.doesNotMatch(operator.stderr, /fetch failed/);
  });

  test('tail and listen say they reconnect when the service stops, and carry on when it is back', async () => {
    running = await startService(env);
    const port = new URL(running.origin).port;
    const cliEnv = { TESSERA_URL: running.origin, TESSERA_API_KEY: running.privateKey };
    const tail = spawnCli(['deliveries', 'tail', '--interval', '200'], cliEnv);
    commands.push(tail);
    const forwarded = await startReceiver();
    receivers.push(forwarded);
    const listen = spawnCli(['listen', '--forward-to', forwarded.url(), '--events', 'payment.succeeded'], cliEnv);
    commands.push(listen);
    // Each command compiles its TypeScript on start (tsx): slow on a loaded machine.
    await tail.waitFor(/Watching webhook deliveries/, 90_000);
    await listen.waitFor(/^Ready$/m, 90_000);

    await stopService(running);
    running = undefined;
    // A poll during the stopping service's drain is answered 503 service_unavailable (it stops
    // taking work, docs/operations.md#health); after it, refused, or reset or closed when the poll under
    // way was cut (undici names a socket the server closed mid-answer UND_ERR_SOCKET): each is named.
    await tail.waitFor(
      /lost the service, reconnecting \(Ctrl-C stops\): (could not connect to .* \(connection (refused|reset|closed)\)|service_unavailable: The service is stopping)/,
    );
    await listen.waitFor(/lost the service, reconnecting \(Ctrl-C stops\): /);
    // A few back-off rounds pass with the service down: still running, one line each, not one per
    // try. A stand-in on the service's port drops every request, counting each command's tries.
    const tries = { tail: 0, listen: 0 };
    const standIn = createServer((request) => {
      tries[request.url?.includes('/webhook_deliveries') ? 'tail' : 'listen'] += 1;
      request.socket.destroy();
    });
    await new Promise<void>((resolve) => standIn.listen(Number(port), resolve));
    try {
      for (const started = Date.now(); (tries.tail < 2 || tries.listen < 2) && Date.now() - started < 30_000;) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      standIn.closeAllConnections();
      await new Promise((resolve) => standIn.close(resolve));
    }
    assert.ok(tries.tail >= 2 && tries.listen >= 2, JSON.stringify(tries));
    assert.equal(tail.child.exitCode, null, tail.output());
    assert.equal(listen.child.exitCode, null, listen.output());
    assert.equal(tail.output().match(/lost the service/g)?.length, 1, tail.output());
    assert.equal(listen.output().match(/lost the service/g)?.length, 1, listen.output());

    running = await startService({ ...env, PORT: port });
    assert.equal(running.origin, cliEnv.TESSERA_URL, 'the same address');
    // Back-off is at most 10 s; a loaded machine may take a while to start the service.
    await tail.waitFor(/ {2}reconnected$/m, 60_000);
    await listen.waitFor(/ {2}reconnected$/m, 60_000);

    const receiver = await startReceiver();
    receivers.push(receiver);
    const payment = await payWithEndpoint(apiCaller(running), {
      url: receiver.url(),
      enabledEvents: ['payment.succeeded'],
    });
    await receiver.waitFor(1);
    await tail.waitFor(
      / {2}endpoint_payment\.payment_succeeded {2}wd_\d+ {2}#1 {2}200 success {2}\d+ ms {2}http:\/\/127\.0\.0\.1/,
      30_000,
    );
    const [request] = await forwarded.waitFor(1);
    assert.equal(JSON.parse(request!.body).data.id, payment.id);
    await listen.waitFor(/ {2}payment\.succeeded {2}evt_\d{19} {2}200 {2}\d+ ms$/m);

    assert.equal(await tail.stop(), 0);
    assert.equal(await listen.stop(), 0);
    assert.doesNotMatch(tail.output() + listen.output(), /fetch failed/);
  });
});
