import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { databaseKind, storeIndependent, migratedStorage, type TestStorage } from './helpers/harness.js';
import { apiCaller, runCli, spawnCli, startService, stopService, type RunningService } from './helpers/cli-process.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';

describe(`tessera events|deliveries against a started service (${databaseKind})`, { skip: storeIndependent }, () => {
  let storage: TestStorage | undefined;
  let running: RunningService;
  let call: ReturnType<typeof apiCaller>;
  let cliEnv: Record<string, string>;
  let receiver: Receiver;
  let endpointId: string;

  before(async () => {
    storage = await migratedStorage('tessera-events-cli-');
    running = await startService({
      TESSERA_WEBHOOK_TIMEOUT_MS: '2000',
      ...storage.env,
    });
    call = apiCaller(running);
    cliEnv = { TESSERA_URL: running.origin, TESSERA_API_KEY: running.privateKey };
    receiver = await startReceiver();
    const endpoint = await call('/webhook_endpoints/create', {
      url: receiver.url(),
      enabledEvents: ['payment.succeeded', 'payment.failed'],
    });
    endpointId = endpoint.id;
  });
  after(async () => {
    await receiver.close();
    await stopService(running);
    await storage?.remove();
  });

  async function pay(cardNo: string) {
    const method = await call('/payment_methods/create', {
      type: 'card',
      card: { cardNo, expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    return call('/payment/create', { amount: '1999', currency: 'USD', paymentMethod: method.id, confirm: 'true' });
  }

  async function eventOf(paymentId: string, type: string): Promise<string> {
    const page = await call(`/events?type=${type}&objectId=${paymentId}`);
    return page.data[0].id;
  }

  test('events list --json answers the API page, filtered by --type and --object', async () => {
    const payment = await pay('4242424242424242');
    const result = await runCli(
      ['events', 'list', '--type', 'payment.succeeded', '--object', payment.id, '--json'],
      cliEnv,
    );
    assert.equal(result.code, 0, result.stderr);
    const page = JSON.parse(result.stdout);
    assert.equal(page.data.length, 1);
    assert.equal(page.data[0].type, 'payment.succeeded');
    assert.equal(page.data[0].data.id, payment.id);
    assert.equal(page.hasMore, false);
  });

  test('events list prints one aligned line per event, without color when stdout is not a terminal', async () => {
    const payment = await pay('4000000000000002');
    const result = await runCli(['events', 'list', '--limit', '5'], cliEnv);
    assert.equal(result.code, 0, result.stderr);
    assert.ok(!result.stdout.includes('\u001b['), 'no ANSI escape');
    const id = await eventOf(payment.id, 'payment.failed');
    assert.match(result.stdout, new RegExp(`^\\S+Z {2}payment\\.failed +${id} {2}${payment.id}$`, 'm'));
  });

  test('events get --json gives the event and its deliveries; resend makes new ones that are delivered', async () => {
    const payment = await pay('4242424242424242');
    const id = await eventOf(payment.id, 'payment.succeeded');
    const shown = await runCli(['events', 'get', id, '--json'], cliEnv);
    assert.equal(shown.code, 0, shown.stderr);
    const { event, deliveries } = JSON.parse(shown.stdout);
    assert.equal(event.id, id);
    assert.equal(event.data.id, payment.id);
    assert.ok(deliveries.some((delivery: { endpointId: string }) => delivery.endpointId === endpointId));

    const before = receiver.requests.length;
    const resent = await runCli(['events', 'resend', id, '--endpoint', endpointId, '--json'], cliEnv);
    assert.equal(resent.code, 0, resent.stderr);
    const made = JSON.parse(resent.stdout);
    assert.ok(made.data.length >= 1);
    for (const delivery of made.data) {
      assert.equal(delivery.eventId, id);
      assert.equal(delivery.endpointId, endpointId);
      assert.ok(!deliveries.some((old: { id: string }) => old.id === delivery.id));
    }
    await receiver.waitFor(before + made.data.length);

    const missing = await runCli(['events', 'get', 'evt_0000000000000000001'], cliEnv);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /resource_missing: No such event/);
  });

  test('deliveries tail --json prints each new attempt as one JSON line, failures with their error', async () => {
    const earlier = await call('/webhook_deliveries?limit=100');
    assert.ok(earlier.data.length > 0);
    const tail = spawnCli(['deliveries', 'tail', '--interval', '200', '--json'], cliEnv);
    try {
      await tail.waitFor(/Watching webhook deliveries/);
      const payment = await pay('4242424242424242');
      const id = await eventOf(payment.id, 'payment.succeeded');
      const [line] = await tail.waitFor(new RegExp(`^\\{.*"eventId":"${id}".*\\}$`, 'm'));
      const attempt = JSON.parse(line);
      assert.equal(attempt.type, 'endpoint_payment.payment_succeeded');
      assert.equal(attempt.attemptNumber, 1);
      assert.equal(attempt.succeeded, true);
      assert.equal(attempt.httpStatus, 200);
      assert.equal(attempt.url, receiver.url());

      receiver.respond(() => ({ status: 503, body: 'busy' }));
      const failed = await pay('4000000000000002');
      const failedId = await eventOf(failed.id, 'payment.failed');
      const [failedLine] = await tail.waitFor(new RegExp(`^\\{.*"eventId":"${failedId}".*\\}$`, 'm'));
      const failedAttempt = JSON.parse(failedLine);
      assert.equal(failedAttempt.succeeded, false);
      assert.equal(failedAttempt.httpStatus, 503);
      assert.match(failedAttempt.error, /HTTP 503/);
      // What happened before tail started is not printed.
      for (const old of earlier.data) assert.doesNotMatch(tail.output(), new RegExp(old.eventId));
    } finally {
      receiver.respond(() => ({ status: 200, body: 'success' }));
      assert.equal(await tail.stop(), 0);
    }
  });
});
