/**
 * docs/operations.md#metrics: liveness, readiness and GET /metrics of the API server, through HTTP, on both stores.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { randomBytes } from 'node:crypto';
import { injectRaw, startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';

const metricsToken = `metrics_${randomBytes(16).toString('hex')}`;

/** One sample's value from the text exposition, or undefined when the series is absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((entry) => entry.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('health and metrics', () => {
  let ctx: TestContext;
  let merchant: TestMerchant;
  before(async () => {
    ctx = await startTestApp({ env: { TESSERA_METRICS_TOKEN: metricsToken } });
    merchant = await ctx.merchant();
  });
  after(() => ctx?.close());

  const scrape = async (authorization = `Bearer ${ctx.operatorKey}`) =>
    injectRaw(ctx, { method: 'GET', url: '/metrics', headers: { authorization } });

  it('answers live and ready with their checks, and /health as ready', async () => {
    const live = await injectRaw(ctx, { method: 'GET', url: '/health/live' });
    assert.equal(live.statusCode, 200);
    assert.deepEqual(live.json(), { status: 'ok', checks: { process: { status: 'ok' } } });
    for (const url of ['/health/ready', '/health']) {
      const ready = await injectRaw(ctx, { method: 'GET', url });
      assert.equal(ready.statusCode, 200, url);
      assert.deepEqual(ready.json(), {
        status: 'ok',
        checks: { process: { status: 'ok' }, database: { status: 'ok' }, schema: { status: 'ok' } },
      });
    }
  });

  it('is not ready while the database does not answer within 1 s, and ready again once it does', async () => {
    let answered!: () => void;
    const held = new Promise<void>((resolve) => (answered = resolve));
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => (locked = resolve));
    // The table the readiness check reads, locked by another transaction: on PostgreSQL the check
    // waits for the lock, on PGlite (one connection) for the connection.
    const holder = ctx.tessera.db.transaction(async (tx) => {
      await tx.query('LOCK TABLE schema_migrations IN ACCESS EXCLUSIVE MODE');
      locked();
      await held;
    });
    // Let go after 4 s whatever happens: a check without its timeout would then answer 200, late.
    const letGo = setTimeout(() => answered(), 4000);
    try {
      await lockTaken;
      const slow = await injectRaw(ctx, { method: 'GET', url: '/health/ready' });
      assert.equal(slow.statusCode, 503, slow.body);
      assert.deepEqual(slow.json(), {
        status: 'unavailable',
        checks: { process: { status: 'ok' }, database: { status: 'failing', detail: 'no answer within 1000 ms' } },
      });
    } finally {
      clearTimeout(letGo);
      answered();
      await holder;
    }
    assert.equal((await injectRaw(ctx, { method: 'GET', url: '/health/ready' })).statusCode, 200);
  });

  it('refuses /metrics without the operator key or the metrics token', async () => {
    for (const authorization of ['', 'Bearer wrong-token-wrong-token-wrong', `Bearer ${merchant.privateKey}`]) {
      const response = await scrape(authorization);
      assert.equal(response.statusCode, 401, authorization);
      assert.equal(response.json().code, 'authentication_error');
    }
    assert.equal((await scrape(`Bearer ${metricsToken}`)).statusCode, 200);
  });

  it('counts requests by route pattern, payments by status and initiator, and the database gauges', async () => {
    await merchant.call('POST', '/webhook_endpoints/create', {
      url: 'http://127.0.0.1:9/hook',
      enabledEvents: ['payment.succeeded'],
    });
    const method = await merchant.call('POST', '/payment_methods/create', {
      type: 'card',
      card: { cardNo: '4242424242424242', expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    const payment = await merchant.call('POST', '/payment/create', {
      amount: '1000',
      currency: 'USD',
      paymentMethod: method.body.data.id,
      confirm: true,
    });
    assert.equal(payment.body.data.status, 'succeeded');
    const declined = await merchant.call('POST', '/payment_methods/create', {
      type: 'card',
      card: { cardNo: '4000000000000002', expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    await merchant.call('POST', '/payment/create', {
      amount: '1000',
      currency: 'USD',
      paymentMethod: declined.body.data.id,
      confirm: true,
    });
    await merchant.call('GET', `/payment/${payment.body.data.id}`);
    // A stored card charged again by the merchant (MIT), and a refund of it.
    const customer = await merchant.call('POST', '/customers/create', { email: 'mit@example.com' });
    const stored = await merchant.call('POST', '/payment_methods/create', {
      type: 'card',
      card: { cardNo: '4242424242424242', expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    const storing = await merchant.call('POST', '/payment/create', {
      amount: '1000',
      currency: 'USD',
      customerId: customer.body.data.id,
      paymentMethod: stored.body.data.id,
      setupFutureUsage: 'on',
      confirm: true,
    });
    assert.equal(storing.body.data.status, 'succeeded', storing.raw);
    const mit = await merchant.call('POST', '/payment/create', {
      amount: '250',
      currency: 'USD',
      customerId: customer.body.data.id,
      paymentMethod: stored.body.data.id,
      subsequentInitialType: 'mit',
      confirm: true,
    });
    assert.equal(mit.body.data.status, 'succeeded', mit.raw);
    const refund = await merchant.call('POST', '/refunds/create', { paymentId: mit.body.data.id });
    assert.equal(refund.status, 200, refund.raw);

    // The database-wide gauges are computed again once they are 10 s old.
    ctx.clock.advance(10_000);
    const response = await scrape();
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    const text = response.body;
    assert.equal(
      sample(text, 'tessera_http_requests_total{method="GET",route="/api/services/v1/payment/:id",status="200"}'),
      1,
    );
    assert.ok(!text.includes(payment.body.data.id), 'no raw URL (object id) in a label');
    assert.equal(sample(text, 'tessera_payments_total{status="succeeded",initiator="customer"}'), 2);
    assert.equal(sample(text, 'tessera_payments_total{status="succeeded",initiator="merchant"}'), 1);
    const refunded = refund.body.data.status as string;
    assert.equal(sample(text, `tessera_refunds_total{status="${refunded}"}`), 1, text);
    assert.equal(sample(text, 'tessera_payments_total{status="failed",initiator="customer"}'), 1);
    assert.match(
      text,
      /^tessera_http_request_duration_seconds_bucket\{le="0\.005",method="POST",route="\/api\/services\/v1\/payment\/create"\} \d+$/m,
    );
    // The endpoint's delivery is planned and waits: the gauges are the database's.
    assert.equal(sample(text, 'tessera_webhook_endpoints{health="healthy"}'), 1);
    assert.equal(sample(text, 'tessera_webhook_endpoints{health="disabled"}'), 0);
    assert.ok((sample(text, 'tessera_webhook_deliveries_pending') ?? -1) >= 0);
    assert.ok(sample(text, 'tessera_webhook_oldest_pending_seconds') !== undefined);
    assert.equal(sample(text, 'tessera_ready'), 1, 'ready, as /health/ready says');
    assert.ok(sample(text, 'process_cpu_user_seconds_total') !== undefined, 'default process metrics');
    assert.match(text, /^nodejs_eventloop_lag_seconds /m);
    assert.match(text, /^# TYPE tessera_webhook_attempts_total counter$/m);
  });

  it('counts webhook attempts by outcome and shows the oldest pending delivery', async () => {
    ctx.clock.advance(30_000);
    await ctx.tessera.webhookDispatcher.runOnce();
    ctx.clock.advance(20_000);
    const text = (await scrape()).body;
    assert.ok((sample(text, 'tessera_webhook_attempts_total{outcome="failed"}') ?? 0) >= 1, text);
    assert.ok((sample(text, 'tessera_webhook_deliveries_pending') ?? 0) >= 1);
    assert.ok((sample(text, 'tessera_webhook_oldest_pending_seconds') ?? 0) >= 50);
  });

  it('counts endpoints by the health the endpoint health service keeps: healthy, failing, disabled', async () => {
    // The endpoint of the first case failed its attempt above: it is failing now, not healthy.
    const second = await merchant.call('POST', '/webhook_endpoints/create', {
      url: 'http://127.0.0.1:9/other',
      enabledEvents: ['payment.succeeded'],
    });
    const third = await merchant.call('POST', '/webhook_endpoints/create', {
      url: 'http://127.0.0.1:9/third',
      enabledEvents: ['payment.succeeded'],
    });
    const disabled = await merchant.call('POST', `/webhook_endpoints/${second.body.data.id}/update`, {
      status: 'disabled',
    });
    assert.equal(disabled.body.data.status, 'disabled');
    assert.equal(third.body.code, 'success');
    ctx.clock.advance(10_000);
    const text = (await scrape()).body;
    assert.equal(sample(text, 'tessera_webhook_endpoints{health="failing"}'), 1, text);
    assert.equal(sample(text, 'tessera_webhook_endpoints{health="disabled"}'), 1);
    assert.equal(sample(text, 'tessera_webhook_endpoints{health="healthy"}'), 1);
  });

  it('counts a delivery ended unsent, its endpoint disabled after it was planned, as a skipped attempt', async () => {
    const shop = await ctx.merchant();
    const endpoint = await shop.call('POST', '/webhook_endpoints/create', {
      url: 'http://127.0.0.1:9/skipped',
      enabledEvents: ['payment.succeeded'],
    });
    const method = await shop.call('POST', '/payment_methods/create', {
      type: 'card',
      card: { cardNo: '4242424242424242', expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    const payment = await shop.call('POST', '/payment/create', {
      amount: '1000',
      currency: 'USD',
      paymentMethod: method.body.data.id,
      confirm: true,
    });
    assert.equal(payment.body.data.status, 'succeeded');
    const before = sample((await scrape()).body, 'tessera_webhook_attempts_total{outcome="skipped"}') ?? 0;
    await shop.call('POST', `/webhook_endpoints/${endpoint.body.data.id}/update`, { status: 'disabled' });
    await ctx.tessera.webhookDispatcher.runOnce();
    const text = (await scrape()).body;
    assert.equal(sample(text, 'tessera_webhook_attempts_total{outcome="skipped"}'), before + 1, text);
  });
});
