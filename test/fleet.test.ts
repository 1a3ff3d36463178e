/**
 * DESIGN §11 and issue 18: three API processes and a worker on one PostgreSQL behind a real
 * HAProxy, scraped by a real Prometheus. Every guarantee is checked through the balancer or
 * across processes. PostgreSQL only: PGlite is the database of one process. A new case takes the
 * running `fleet` (test/helpers/fleet.ts).
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { databaseKind } from './helpers/harness.js';
import { startFleet, killService, type Fleet } from './helpers/fleet.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';

const onPostgres = databaseKind === 'postgres';

describe('a fleet behind HAProxy', { skip: onPostgres ? false : 'PostgreSQL only: PGlite is one process' }, () => {
  let fleet: Fleet;
  let receiver: Receiver;
  let key: string;
  before(async () => {
    fleet = await startFleet();
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

  async function pay(): Promise<{ status: number; id?: string }> {
    try {
      const method = await call('POST', '/payment_methods/create', {
        type: 'card',
        card: { cardNo: '4242424242424242', expMonth: '12', expYear: '2030', securityCode: '123' },
      });
      if (method.status !== 200) return { status: method.status };
      const payment = await call('POST', '/payment/create', {
        amount: '1000',
        currency: 'USD',
        paymentMethod: method.body.data.id,
        confirm: true,
      });
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
    for (let index = 0; index < 6; index++) assert.equal((await pay()).status, 200);
    for (const api of fleet.apis) {
      const metrics = await fetch(`${api.origin}/metrics`, { headers: { authorization: `Bearer ${fleet.adminKey}` } });
      assert.match(
        await metrics.text(),
        /^tessera_http_requests_total\{method="POST",route="\/api\/services\/v1\/payment\/create",status="200"\} [1-9]/m,
      );
    }
  });

  it('a token rolled on one process signs every attempt that starts after its answer, whoever sends it', async () => {
    const endpoint = await call('POST', '/webhook_endpoints/create', {
      url: receiver.url('/roll'),
      enabledEvents: ['payment.succeeded'],
    });
    assert.equal(endpoint.status, 200, JSON.stringify(endpoint.body));
    for (let index = 0; index < 3; index++) assert.equal((await pay()).status, 200);
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
      const time = String(request.headers['request-time']);
      const expected = createHmac('sha256', newToken).update(`${time}.${request.rawBody}`).digest('hex');
      assert.equal(
        String(request.headers.signature).toUpperCase(),
        expected.toUpperCase(),
        'signed with the new token',
      );
    }
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
