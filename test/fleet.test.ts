/**
 * docs/operations.md#metrics and issue 18: three API processes and a worker on one PostgreSQL behind a real
 * HAProxy, scraped by a real Prometheus. Every guarantee is checked through the balancer or
 * across processes. PostgreSQL only: PGlite is the database of one process. A new case takes the
 * running `fleet` (test/helpers/fleet.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { verifyWebhook } from '../sdk/verify-webhook.js';
import { databaseKind } from './helpers/harness.js';
import { startFleet, killService, type BalancedFleet } from './helpers/fleet.js';
import { answerSuccess, startReceiver, type Receiver } from './helpers/receiver.js';

const onPostgres = databaseKind === 'postgres';
/** The fleet's limit per client address on public-key routes (one process's limit, shared by all). */
const perAddressPerMinute = 20;

interface StreamedEvent {
  id: string;
  type: string;
  data: { id: string };
}

/** GET /events/stream read as it comes: answers once `: connected` arrived. */
async function openStream(url: string, key: string) {
  const abort = new AbortController();
  const response = await fetch(url, { headers: { authorization: `Bearer ${key}` }, signal: abort.signal });
  assert.equal(response.status, 200);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let connected = false;
  const events: StreamedEvent[] = [];
  const reading = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      text += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = text.indexOf('\n\n')) >= 0) {
        const block = text.slice(0, end);
        text = text.slice(end + 2);
        if (block.startsWith(': connected')) connected = true;
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (data) events.push(JSON.parse(data) as StreamedEvent);
      }
    }
  })().catch(() => {});
  await waitUntil(async () => (connected ? true : undefined));
  return {
    /** The events so far once `done` says they are enough; fails after 20 s. */
    async waitFor(done: (events: StreamedEvent[]) => boolean): Promise<StreamedEvent[]> {
      await waitUntil(async () => (done(events) ? true : undefined), 20_000);
      return events;
    },
    close() {
      abort.abort();
      void reading;
    },
  };
}

async function waitUntil<T>(probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await probe();
    if (found !== undefined) return found;
    assert.ok(Date.now() < deadline, `not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('a fleet behind HAProxy', { skip: onPostgres ? false : 'PostgreSQL only: PGlite is one process' }, () => {
  let fleet: BalancedFleet;
  let receiver: Receiver;
  let key: string;
  before(async () => {
    fleet = await startFleet({
      balancer: true,
      env: { TESSERA_RATE_PER_ADDRESS_PER_MINUTE: String(perAddressPerMinute) },
    });
    receiver = await startReceiver();
    key = await fleet.merchantKey();
  });
  after(async () => {
    await receiver?.close();
    await fleet?.stop();
  });

  /** The merchant API through the balancer (or one process's base URL). */
  async function call(method: 'GET' | 'POST', route: string, body?: unknown, baseUrl = fleet.baseUrl) {
    const response = await fetch(`${baseUrl}${route}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as any };
  }

  async function pay(baseUrl = fleet.baseUrl): Promise<{ status: number; id?: string }> {
    try {
      const method = await call(
        'POST',
        '/payment_methods/create',
        {
          type: 'card',
          card: { cardNo: '4242424242424242', expMonth: '12', expYear: '2030', securityCode: '123' },
        },
        baseUrl,
      );
      if (method.status !== 200) return { status: method.status };
      const payment = await call(
        'POST',
        '/payment/create',
        { amount: '1000', currency: 'USD', paymentMethod: method.body.data.id, confirm: true },
        baseUrl,
      );
      return payment.status === 200 ? { status: 200, id: payment.body.data.id } : { status: payment.status };
    } catch {
      return { status: 0 };
    }
  }

  /** Payments from `concurrency` clients until `stop` resolves: the ids answered 200 and the rest. */
  async function load(concurrency: number, stop: Promise<unknown>) {
    let stopped = false;
    void stop.then(() => (stopped = true));
    const answered: string[] = [];
    const failed: number[] = [];
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (!stopped) {
          const result = await pay();
          if (result.id) answered.push(result.id);
          else failed.push(result.status);
        }
      }),
    );
    return { answered, failed };
  }

  async function allStored(ids: readonly string[]) {
    for (const id of ids) {
      const read = await call('GET', `/payment/${id}`);
      assert.equal(read.status, 200, `answered payment ${id} is stored`);
      assert.equal(read.body.data.status, 'succeeded');
    }
  }

  it('spreads requests over every process (round robin)', async () => {
    // Each process's own counter of answered payments: every one must have answered some.
    const counted =
      /^tessera_http_requests_total\{method="POST",route="\/api\/services\/v1\/payment\/create",status="200"\} [1-9]/m;
    const served = async () => {
      const texts = await Promise.all(
        fleet.apis.map(async (api) => {
          const metrics = await fetch(`${api.origin}/metrics`, {
            headers: { authorization: `Bearer ${fleet.adminKey}` },
          });
          return metrics.text();
        }),
      );
      return texts.filter((text) => counted.test(text)).length;
    };
    // Round robin reaches every process within a few rounds (a health check slowed by a loaded
    // machine may skip one for a moment); 30 payments are ten rounds of three.
    let payments = 0;
    while ((await served()) < fleet.apis.length && payments < 30) {
      for (let index = 0; index < 3; index++, payments++) assert.equal((await pay()).status, 200);
    }
    assert.equal(await served(), fleet.apis.length, `after ${payments} payments some process answered none`);
  });

  it('a token rolled on one process signs every attempt that starts after its answer, whoever sends it', async () => {
    const endpoint = await call('POST', '/webhook_endpoints/create', {
      url: receiver.url('/roll'),
      enabledEvents: ['payment.succeeded'],
    });
    assert.equal(endpoint.status, 200, JSON.stringify(endpoint.body));
    const before = receiver.requests.length;
    for (let index = 0; index < 3; index++) assert.equal((await pay()).status, 200);
    // Their attempts all arrived first: one still under way at the roll was rightly signed with the
    // old token, and would be counted below (seen once in a CI run).
    await receiver.waitFor(before + 3, 60_000);
    const rolled = await call(
      'POST',
      `/webhook_endpoints/${endpoint.body.data.id}/roll_token`,
      {},
      fleet.apis[0]!.baseUrl,
    );
    assert.equal(rolled.status, 200);
    const newToken = rolled.body.data.token as string;
    const rolledAt = receiver.requests.length;
    for (let index = 0; index < 6; index++) assert.equal((await pay()).status, 200);
    const after = (await receiver.waitFor(rolledAt + 6, 60_000)).slice(rolledAt);
    for (const request of after) {
      // Either kind of notification (docs/webhooks.md), each verified with the new token.
      assert.doesNotThrow(
        () => verifyWebhook({ headers: request.headers, rawBody: request.rawBody, token: newToken }),
        'signed with the new token',
      );
    }
  });

  it('a roll on one process signs the deliveries another process claimed before it and sends after its answer', async () => {
    // The receiver holds every notification to this path until the roll has been answered: each
    // process's slots for the target fill up, and the deliveries it claimed beyond them wait in its
    // queue (a process claims three times its per-target cap), to be sent once slots free up.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    receiver.respond((request) => (request.path === '/held' ? { until: held } : { status: 200, body: 'success' }));
    const heldRequests = () => receiver.requests.filter((request) => request.path === '/held');
    try {
      const endpoint = await call('POST', '/webhook_endpoints/create', {
        url: receiver.url('/held'),
        enabledEvents: ['payment.succeeded'],
      });
      assert.equal(endpoint.status, 200, JSON.stringify(endpoint.body));
      // All made on one process that is not the one that rolls: it claims them, and can send only
      // eight at once (the cap per target).
      const payer = fleet.apis[1]!.baseUrl;
      const payments = 14;
      for (let index = 0; index < payments; index++) assert.equal((await pay(payer)).status, 200);
      await waitUntil(async () => (heldRequests().length >= 8 ? true : undefined));
      // Another process may have claimed some of them by its poll and sent them at once: every
      // attempt that started before the roll must have reached the receiver (which holds them all)
      // before the count below is taken, or a slow connection would count as an attempt after it.
      let seen = -1;
      await waitUntil(async () => {
        const now = heldRequests().length;
        const settled = now === seen;
        seen = now;
        if (!settled) await new Promise((resolve) => setTimeout(resolve, 400));
        return settled ? true : undefined;
      });
      const rolled = await call(
        'POST',
        `/webhook_endpoints/${endpoint.body.data.id}/roll_token`,
        {},
        fleet.apis[0]!.baseUrl,
      );
      assert.equal(rolled.status, 200);
      const newToken = rolled.body.data.token as string;
      const rolledAt = heldRequests().length;
      assert.ok(rolledAt < payments, `${rolledAt} of ${payments} were sent before the roll: none left to check`);
      release();
      await waitUntil(async () => (heldRequests().length >= payments ? true : undefined), 60_000);
      for (const request of heldRequests().slice(rolledAt)) {
        assert.doesNotThrow(
          () => verifyWebhook({ headers: request.headers, rawBody: request.rawBody, token: newToken }),
          'an attempt that started after the roll was answered is signed with the new token',
        );
      }
    } finally {
      release();
      receiver.respond(answerSuccess);
    }
  });

  it('the limits are global: one address gets about the limit of one process through the balancer, not one per process', async () => {
    const keys = await fleet.merchantKeys();
    const created = await fetch(`${fleet.baseUrl}/payment_methods/create`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keys.privateKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        type: 'card',
        card: { cardNo: '4242424242424242', expMonth: '12', expYear: '2030', securityCode: '123' },
      }),
    });
    const method = ((await created.json()) as any).data.id as string;
    const statuses: number[] = [];
    // Three times the limit, one at a time: the balancer sends each to the next process.
    for (let index = 0; index < 3 * perAddressPerMinute; index++) {
      const response = await fetch(`${fleet.baseUrl}/payment_methods/${method}`, {
        headers: { authorization: `Bearer ${keys.publicKey}` },
      });
      await response.arrayBuffer();
      statuses.push(response.status);
    }
    const allowed = statuses.filter((status) => status === 200).length;
    assert.deepEqual([...new Set(statuses)].sort(), [200, 429], statuses.join(','));
    // The bucket refills one request every 60/limit seconds: a few more may come back meanwhile.
    assert.ok(allowed >= perAddressPerMinute && allowed <= perAddressPerMinute + 5, statuses.join(','));
  });

  it("the event stream of one process sees every process's events", async () => {
    const stream = await openStream(`${fleet.apis[0]!.baseUrl}/events/stream?types=payment.succeeded`, key);
    try {
      const paid: string[] = [];
      // Two payments made by each process, and two through the balancer.
      for (const baseUrl of [...fleet.apis.slice(0, 3).map((api) => api.baseUrl), fleet.baseUrl]) {
        for (let index = 0; index < 2; index++) {
          const payment = await pay(baseUrl);
          assert.equal(payment.status, 200);
          paid.push(payment.id!);
        }
      }
      const seen = await stream.waitFor((events) => paid.every((id) => events.some((event) => event.data.id === id)));
      for (const event of seen) assert.equal(event.type, 'endpoint_payment.payment_succeeded');
      assert.equal(new Set(seen.map((event) => event.id)).size, seen.length, 'each event once');
    } finally {
      stream.close();
    }
  });

  it('a retry after kill -9 of the process holding its Idempotency-Key gets its outcome within 15 s', async () => {
    // A fourth process, outside the balancer, holds every keyed answer for ten minutes after the effect.
    const slow = await fleet.add({ TESSERA_TEST_ANSWER_DELAY_MS: '600000' });
    const method = await call('POST', '/payment_methods/create', {
      type: 'card',
      card: { cardNo: '4242424242424242', expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    const body = { amount: '3100', currency: 'USD', paymentMethod: method.body.data.id, confirm: true };
    const keyed = (baseUrl: string) =>
      fetch(`${baseUrl}/payment/create`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          'idempotency-key': 'fleet-kill',
        },
        body: JSON.stringify(body),
      }).then(async (response) => (await response.json()) as any);
    const unanswered = keyed(slow.baseUrl).catch(() => undefined);
    const made = await waitUntil(async () => {
      const page = await call('GET', '/payment?limit=5');
      return page.body.data.data.find((payment: any) => payment.amount === '3100');
    });
    await killService(slow);
    const killedAt = Date.now();
    assert.equal(await unanswered, undefined, 'the killed process never answered');
    let retried: any;
    while (Date.now() - killedAt < 15_000) {
      retried = await keyed(fleet.baseUrl);
      if (retried.code === 'success') break;
      assert.equal(retried.code, 'idempotency_error', JSON.stringify(retried));
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    assert.equal(retried.code, 'success', `answered within 15 s of the kill: ${JSON.stringify(retried)}`);
    assert.equal(retried.data.id, made.id, 'the payment the killed process made, not a second one');
    assert.equal(retried.data.status, 'succeeded');
  });

  it('kill -9 of an API process under load loses no answered payment', async () => {
    let killAfter!: () => void;
    const killed = new Promise<void>((resolve) => (killAfter = resolve));
    const running = load(
      4,
      killed.then(() => new Promise((resolve) => setTimeout(resolve, 3000))),
    );
    // Let some payments be answered by every process, then kill one mid-load.
    for (let tries = 0; tries < 600; tries++) {
      const metrics = await fetch(`${fleet.apis[1]!.origin}/health/live`).catch(() => undefined);
      if (metrics && tries > 10) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await killService(fleet.apis[1]!);
    killAfter();
    const { answered } = await running;
    assert.ok(answered.length > 0);
    await allStored(answered);
  });

  it('SIGTERM drains a process: it exits 0 and every payment it answered is stored', async () => {
    const api = fleet.apis[2]!;
    const exited = new Promise<number | null>((resolve) => api.child.once('exit', (code) => resolve(code)));
    const running = load(3, exited);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    api.child.kill('SIGTERM');
    const code = await exited;
    const { answered } = await running;
    assert.equal(code, 0, api.output());
    await allStored(answered);
  });

  it('Prometheus scrapes /metrics and answers a PromQL query over it', async () => {
    for (let tries = 0; ; tries++) {
      const result = await fleet.query(
        'sum by (route) (tessera_http_requests_total{route="/api/services/v1/payment/create"}) > 0',
      );
      if (result.length > 0) {
        assert.ok(Number(result[0]!.value[1]) > 0);
        break;
      }
      assert.ok(tries < 150, 'a scrape within 30 s');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const up = await fleet.query('up{job="tessera"} == 1');
    assert.ok(up.length >= 2, 'the process left and the worker are up');
    const worker = await fleet.query(
      `tessera_webhook_deliveries_pending{instance="${new URL(fleet.workerOrigin).host}"}`,
    );
    assert.equal(worker.length, 1, 'the worker is scraped on its health port');
  });
});
