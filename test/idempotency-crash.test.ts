import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Processor } from '../src/processor/processor.js';
import { createSandboxProcessor } from '../src/processor/sandbox.js';
import { databaseKind, startTestApp, migratedStorage, type TestStorage } from './helpers/harness.js';
import { apiCaller, startService, stopService, type RunningService } from './helpers/cli-process.js';

/**
 * docs/decisions/0003: a process killed between a request's effect and storing its answer leaves
 * a claim whose lease runs out; a retry then gets the created object, never a 24-hour refusal and
 * never a second object.
 */
describe(`Idempotency-Key after a killed process (${databaseKind})`, () => {
  const leaseMs = 1500;
  let storage: TestStorage | undefined;
  let env: Record<string, string>;
  let running: RunningService | undefined;

  before(async () => {
    storage = await migratedStorage('tessera-idempotency-crash-');
    env = {
      NODE_ENV: 'test',
      TESSERA_IDEMPOTENCY_LEASE_MS: String(leaseMs),
      ...storage.env,
    };
  });
  after(async () => {
    if (running) await stopService(running);
    await storage?.remove();
  });

  function post(service: RunningService, route: string, body: unknown, key: string) {
    return fetch(`${service.baseUrl}${route}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${service.privateKey}`,
        'content-type': 'application/json',
        'idempotency-key': key,
      },
      body: JSON.stringify(body),
    });
  }

  async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const found = await probe();
      if (found !== undefined) return found;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  test('a payment created by a process killed before it answered is answered to the retry, and only once', async () => {
    // The first process holds every keyed answer for a minute after the effect: it is killed there.
    const first = await startService({ ...env, TESSERA_TEST_ANSWER_DELAY_MS: '60000' });
    const call = apiCaller(first);
    const method = await call('/payment_methods/create', {
      type: 'card',
      card: { cardNo: '4242424242424242', expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    const body = { amount: '2500', currency: 'USD', paymentMethod: method.id, confirm: 'true' };
    const pending = post(first, '/payment/create', body, 'crash-payment-1').catch(() => undefined);
    const created = await until('the payment to be committed', async () => {
      const page = await call('/payment');
      return page.data.length > 0 ? page.data[0] : undefined;
    });
    const exited = new Promise((resolve) => first.child.once('exit', resolve));
    first.child.kill('SIGKILL');
    await exited;
    assert.equal(await pending, undefined, 'the first request never got its answer');

    running = await startService(env);
    const retry = await until('the lease to run out', async () => {
      const response = await post(running!, '/payment/create', body, 'crash-payment-1');
      const answer = (await response.json()) as { code: string; msg: string; data: any };
      if (answer.code === 'success') return answer;
      assert.equal(answer.code, 'idempotency_error');
      assert.match(answer.msg, /still being processed; retry after 2 seconds/);
      return undefined;
    });
    assert.equal(retry.data.id, created.id);
    assert.equal(retry.data.status, 'succeeded');
    assert.equal(retry.data.amount, '2500');

    const replayed = await post(running, '/payment/create', body, 'crash-payment-1');
    assert.equal(replayed.headers.get('idempotent-replayed'), 'true');
    assert.equal(((await replayed.json()) as any).data.id, created.id);
    const page = await apiCaller(running)('/payment');
    assert.deepEqual(
      page.data.map((payment: { id: string }) => payment.id),
      [created.id],
    );
  });
});

describe(`Idempotency-Key after its lease ran out, the first attempt still running (${databaseKind})`, () => {
  test('the retry runs afresh under the reserved payment id, and the late first attempt answers the same payment', async () => {
    // The first authorization hangs until released: a process stalled past its lease.
    const sandbox = createSandboxProcessor();
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let calls = 0;
    const processor: Processor = {
      ...sandbox,
      async authorize(request) {
        calls += 1;
        if (calls === 1) await held;
        return sandbox.authorize(request);
      },
    };
    const ctx = await startTestApp({ processor, env: { TESSERA_IDEMPOTENCY_LEASE_MS: '60000' } });
    try {
      const merchant = await ctx.merchant();
      const method = await merchant.call('POST', '/payment_methods/create', {
        type: 'card',
        card: { cardNo: '4242424242424242', expMonth: '12', expYear: '2030', securityCode: '123' },
      });
      const body = { amount: '700', currency: 'USD', paymentMethod: method.body.data.id, confirm: 'true' };
      const key = { 'idempotency-key': 'stalled-payment-1' };
      const first = merchant.call('POST', '/payment/create', body, key);
      while (calls === 0) await new Promise((resolve) => setTimeout(resolve, 10));

      const early = await merchant.call('POST', '/payment/create', body, key);
      assert.equal(early.body.code, 'idempotency_error', 'refused while the lease runs');
      ctx.clock.advance(60_001);
      const retry = await merchant.call('POST', '/payment/create', body, key);
      assert.equal(retry.status, 200, retry.raw);
      assert.equal(retry.body.data.status, 'succeeded');

      release();
      const late = await first;
      assert.equal(late.status, 200, late.raw);
      assert.equal(late.body.data.id, retry.body.data.id, 'the late attempt met the payment under the same id');
      const listed = await merchant.call('GET', '/payment');
      assert.deepEqual(
        listed.body.data.data.map((payment: { id: string }) => payment.id),
        [retry.body.data.id],
      );
    } finally {
      release();
      await ctx.close();
    }
  });
});
