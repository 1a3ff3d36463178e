import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { triggerTypes } from '../src/cli/trigger.js';
import { databaseKind, storeIndependent, migratedStorage, type TestStorage } from './helpers/harness.js';
import { apiCaller, runCli, startService, stopService, type RunningService } from './helpers/cli-process.js';

describe(`tessera trigger against a started service (${databaseKind})`, { skip: storeIndependent }, () => {
  let storage: TestStorage | undefined;
  let running: RunningService;
  let call: ReturnType<typeof apiCaller>;
  let cliEnv: Record<string, string>;

  before(async () => {
    storage = await migratedStorage('tessera-trigger-');
    running = await startService({
      TESSERA_SANDBOX_FOLLOW_UP_DELAY_MS: '200',
      TESSERA_JOB_POLL_INTERVAL_MS: '50',
      ...storage.env,
    });
    call = apiCaller(running);
    cliEnv = { TESSERA_URL: running.origin, TESSERA_API_KEY: running.privateKey };
  });
  after(async () => {
    await stopService(running);
    await storage?.remove();
  });

  /** The events of `type` about `objectId`, waiting a little for those that follow a settlement. */
  async function eventsOf(type: string, objectId: string): Promise<Array<{ id: string; data: { id: string } }>> {
    const query = `type=${encodeURIComponent(type)}&objectId=${objectId}`;
    const deadline = Date.now() + 10_000;
    for (;;) {
      const page = await call(`/events?${query}`);
      if (page.data.length > 0 || Date.now() > deadline) return page.data;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  for (const type of triggerTypes) {
    test(`trigger ${type} makes a real ${type} event and prints the ids`, async () => {
      const result = await runCli(['trigger', type, '--json'], cliEnv);
      assert.equal(result.code, 0, result.stdout + result.stderr);
      const printed = JSON.parse(result.stdout) as { type: string; ids: Record<string, string>; event: string | null };
      assert.equal(printed.type, type);
      const group = type.split('.')[0]!.toLowerCase();
      const objectId = printed.ids[group === 'payment' ? 'payment' : group]!;
      assert.match(objectId, /^(pt|re|in|dp)_\d{19}$/);
      const events = await eventsOf(type, objectId);
      assert.equal(events.length, 1, `${type} of ${objectId}: ${JSON.stringify(events)}`);
      assert.equal(events[0]!.data.id, objectId);
      if (printed.event !== null) assert.equal(printed.event, events[0]!.id);
    });
  }

  test('trigger prints the ids as lines on a terminal, with what endpoints receive', async () => {
    const text = await runCli(['trigger', 'payment.succeeded'], cliEnv);
    assert.equal(text.code, 0, text.stderr);
    assert.match(
      text.stdout,
      /^Triggered payment\.succeeded\n {2}paymentMethod {2}pm_\d{19}\n {2}payment +pt_\d{19}\n {2}event +evt_\d{19}\n {2}sent as +endpoint_payment\.payment_succeeded \(and payment\.succeeded to endpoints with legacyNotifications on\)\n$/,
    );
  });

  test('trigger takes the endpoint_ name too, and answers a misspelt code with "did you mean"', async () => {
    const byEndpointName = await runCli(['trigger', 'endpoint_refund.refund_pending', '--json'], cliEnv);
    assert.equal(byEndpointName.code, 0, byEndpointName.stderr);
    assert.equal(JSON.parse(byEndpointName.stdout).type, 'refund.pending');

    const wrongCase = await runCli(['trigger', 'invoice.sent'], cliEnv);
    assert.equal(wrongCase.code, 1);
    assert.match(wrongCase.stderr, /'invoice\.sent' is not an event code; did you mean `Invoice\.sent`\?/);
    const typo = await runCli(['trigger', 'payment.faild'], cliEnv);
    assert.equal(typo.code, 1);
    assert.match(typo.stderr, /did you mean `payment\.failed`\?/);
    const nothingClose = await runCli(['trigger', 'shipment'], cliEnv);
    assert.equal(nothingClose.code, 1);
    assert.match(nothingClose.stderr, /event codes are payment\.processing, .*Invoice\.voided/);
    const payout = await runCli(['trigger', 'payout.paid'], cliEnv);
    assert.equal(payout.code, 1);
    assert.match(payout.stderr, /payout\.paid is not triggered: a payout needs a bank account set by the operator/);
    const none = await runCli(['trigger'], cliEnv);
    assert.equal(none.code, 1);
    assert.match(none.stderr, /trigger takes one of: .*payment\.succeeded.*Invoice\.voided/);
  });

  test('events list --type takes either name in any letter case and suggests a code instead of printing "No events"', async () => {
    const listed = await runCli(['events', 'list', '--type', 'endpoint_payment.payment_succeeded', '--json'], cliEnv);
    assert.equal(listed.code, 0, listed.stderr);
    const page = JSON.parse(listed.stdout) as { data: Array<{ type: string }> };
    assert.ok(page.data.length > 0);
    assert.ok(page.data.every((event) => event.type === 'payment.succeeded'));
    // In any letter case, as GET /events?type= takes it (docs/webhooks.md#endpoints-and-tokens).
    for (const name of ['Payment.Succeeded', 'ENDPOINT_PAYMENT.PAYMENT_SUCCEEDED']) {
      const anyCase = await runCli(['events', 'list', '--type', name, '--json'], cliEnv);
      assert.equal(anyCase.code, 0, anyCase.stderr);
      assert.deepEqual(JSON.parse(anyCase.stdout), page, name);
    }
    const typo = await runCli(['events', 'list', '--type', 'payment.faild'], cliEnv);
    assert.equal(typo.code, 1);
    assert.doesNotMatch(typo.stdout, /No events/);
    assert.match(typo.stderr, /--type: 'payment\.faild' is not an event code; did you mean `payment\.failed`\?/);
  });
});
