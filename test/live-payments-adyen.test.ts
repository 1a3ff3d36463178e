/**
 * Live payments through an Adyen processor account, end to end over Tessera's HTTP API: every
 * connector request passes a Prism proxy holding Adyen's published description to the stand-in
 * for Adyen (docs/processors.md, Testing). The merchant sees the same objects and events as
 * with the sandbox; the stand-in counts authorisations per idempotency key, so "never twice" is
 * checked where money would move.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { apiBase, injectRaw, scrapedMetric, startTestApp, type TestContext } from './helpers/harness.js';
import { adyenTestCards, startAdyenStandIn, type AdyenStandIn } from './helpers/adyen-stand-in.js';
import { startPrismProxy, type PrismProxy } from './helpers/prism.js';

interface LiveMerchant {
  id: string;
  accountId: string;
  webhookPath: string;
  call(method: 'GET' | 'POST', url: string, body?: unknown): Promise<{ status: number; raw: string; body: any }>;
}

describe('live payments through Adyen', () => {
  let context: TestContext;
  let standIn: AdyenStandIn;
  let prism: PrismProxy;
  let merchant: LiveMerchant;

  before(async () => {
    standIn = await startAdyenStandIn();
    prism = await startPrismProxy({ upstream: standIn.url });
    context = await startTestApp({ env: { TESSERA_PROCESSOR_TIMEOUT_MS: '8000' } });
    merchant = await liveMerchant();
  });
  after(async () => {
    await context?.close();
    await prism?.stop();
    await standIn?.close();
  });

  async function operator(method: 'GET' | 'POST', url: string, body?: unknown) {
    const answer = await injectRaw(context, {
      method,
      url: `/admin/v1${url}`,
      headers: { authorization: `Bearer ${context.operatorKey}`, 'content-type': 'application/json' },
      ...(body ? { payload: JSON.stringify(body) } : {}),
    });
    return { status: answer.statusCode, raw: answer.body, body: JSON.parse(answer.body) };
  }

  async function liveMerchant(): Promise<LiveMerchant> {
    const test = await context.merchant();
    const account = await operator('POST', `/merchants/${test.id}/processor_accounts/create`, {
      processor: 'adyen',
      mode: 'live',
      credentials: { apiKey: standIn.apiKey, merchantAccount: standIn.merchantAccount, hmacKey: standIn.hmacKey },
      baseUrl: prism.url,
    });
    assert.equal(account.status, 200, account.raw);
    const keys = await operator('POST', `/merchants/${test.id}/roll_keys`, { mode: 'live' });
    assert.equal(keys.status, 200, keys.raw);
    const key = keys.body.data.keys.privateKey as string;
    return {
      id: test.id,
      accountId: account.body.data.id,
      webhookPath: new URL(account.body.data.webhookUrl).pathname,
      async call(method, url, body) {
        const answer = await injectRaw(context, {
          method,
          url: `${apiBase}${url}`,
          headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
          ...(body ? { payload: JSON.stringify(body) } : {}),
        });
        return { status: answer.statusCode, raw: answer.body, body: JSON.parse(answer.body) };
      },
    };
  }

  async function method(cardNo: string, customerId?: string): Promise<string> {
    const created = await merchant.call('POST', '/payment_methods/create', {
      type: 'card',
      card: { cardNo, expMonth: '12', expYear: '2030', securityCode: '737' },
      ...(customerId ? { customerId } : {}),
    });
    assert.equal(created.status, 200, created.raw);
    return created.body.data.id;
  }

  async function pay(fields: Record<string, unknown>) {
    return prism.explain(async () => {
      const payment = await merchant.call('POST', '/payment/create', {
        amount: '2500',
        currency: 'EUR',
        confirm: true,
        ...fields,
      });
      assert.equal(payment.status, 200, payment.raw);
      return payment.body.data;
    });
  }

  /** Posts a notification from Adyen to the account's webhook URL, as Adyen does. */
  async function notify(items: Record<string, unknown>[]) {
    const answer = await injectRaw(context, {
      method: 'POST',
      url: merchant.webhookPath,
      headers: { 'content-type': 'application/json' },
      payload: standIn.notificationBody(items),
    });
    return { status: answer.statusCode, body: answer.body };
  }

  const eventsOf = async (paymentId: string) => {
    const listed = await merchant.call('GET', '/events?limit=100');
    return (listed.body.data.data as Array<{ type: string; data: { id: string } }>)
      .filter((event) => event.data.id === paymentId)
      .map((event) => event.type)
      .sort();
  };

  test('stores the card with a first payment, then charges it again as MIT with the network reference', async () => {
    const customer = await merchant.call('POST', '/customers/create', {
      firstName: 'Ada',
      email: 'ada@example.com',
      merchantUserId: `user-${Date.now()}`,
    });
    const customerId = customer.body.data.id as string;
    const pm = await method(adyenTestCards.approved);
    const first = await pay({ customerId, paymentMethod: pm, setupFutureUsage: 'on' });
    assert.equal(first.status, 'succeeded');
    const firstBody = standIn.sent(`${first.id}.authorize`);
    assert.equal(firstBody.storePaymentMethod, true);
    assert.equal(firstBody.shopperReference, customerId);
    assert.equal(firstBody.recurringProcessingModel, 'CardOnFile');
    const mit = await pay({ customerId, paymentMethod: pm, setupFutureUsage: 'on', subsequentInitialType: 'mit' });
    assert.equal(mit.status, 'succeeded');
    const mitBody = standIn.sent(`${mit.id}.authorize`);
    assert.equal(mitBody.shopperInteraction, 'ContAuth');
    assert.equal(mitBody.recurringProcessingModel, 'UnscheduledCardOnFile');
    assert.equal(typeof (mitBody.paymentMethod as Record<string, unknown>).networkPaymentReference, 'string');
    assert.equal((mitBody.paymentMethod as Record<string, unknown>).cvc, undefined);
    assert.deepEqual(await eventsOf(mit.id), ['payment.succeeded']);
    assert.equal(standIn.count('authorise', `${first.id}.authorize`), 1);
    assert.ok(
      (await scrapedMetric(
        context,
        'tessera_processor_requests_total{processor="adyen",operation="authorize",outcome="ok"}',
      )) >= 2,
    );
  });

  test('maps a refusal to the decline code and keeps the processor reason', async () => {
    const failed = await pay({ paymentMethod: await method(adyenTestCards.notEnoughBalance) });
    assert.equal(failed.status, 'failed');
    assert.equal(failed.errorCode, 'insufficient_funds');
    assert.equal(failed.processorReason, 'Not enough balance');
    assert.deepEqual(await eventsOf(failed.id), ['payment.failed']);
  });

  test("sends the shopper to Adyen's 3-D Secure page and back to the merchant's returnUrl", async () => {
    const payment = await pay({
      paymentMethod: await method(adyenTestCards.threeDSecure),
      returnUrl: 'https://shop.example/return?order=7',
    });
    assert.equal(payment.status, 'requires_action');
    const page = new URL(payment.nextAction.redirectToUrl);
    const toAdyen = await injectRaw(context, { method: 'GET', url: `${page.pathname}${page.search}` });
    assert.equal(toAdyen.statusCode, 303);
    const issuer = await fetch(String(toAdyen.headers.location), { redirect: 'manual' });
    const back = new URL(String(issuer.headers.get('location')));
    assert.equal(back.pathname, `/3ds/${payment.id}/return`);
    const returned = await prism.explain(() =>
      injectRaw(context, { method: 'GET', url: `${back.pathname}${back.search}` }),
    );
    assert.equal(returned.statusCode, 303, returned.body);
    const merchantReturn = new URL(String(returned.headers.location));
    assert.equal(merchantReturn.origin + merchantReturn.pathname, 'https://shop.example/return');
    assert.equal(merchantReturn.searchParams.get('payment_id'), payment.id);
    const after = await merchant.call('GET', `/payment/${payment.id}`);
    assert.equal(after.body.data.status, 'succeeded');
    assert.equal(standIn.count('details', `${payment.id}.details`), 1);
  });

  test('a pre-authorization is captured once: pending until the CAPTURE notification, which counts once', async () => {
    const payment = await pay({ paymentMethod: await method(adyenTestCards.approved), preAuth: 'y' });
    assert.equal(payment.status, 'requires_capture');
    const capture = await prism.explain(() => merchant.call('POST', `/payment/${payment.id}/capture`));
    assert.equal(capture.status, 200, capture.raw);
    assert.equal(capture.body.data.status, 'processing');
    const pspReference = standIn.sent(`${payment.id}.capture`) && capture.body.data.id;
    assert.ok(pspReference);
    const item = standIn.notificationItem({
      eventCode: 'CAPTURE',
      success: 'true',
      pspReference: `CAP${Date.now()}`.slice(0, 16),
      originalReference: 'X',
      merchantReference: payment.id,
      amount: { value: 2500, currency: 'EUR' },
    });
    assert.deepEqual(await notify([item]), { status: 200, body: '[accepted]' });
    assert.deepEqual(await notify([item]), { status: 200, body: '[accepted]' });
    const after = await merchant.call('GET', `/payment/${payment.id}`);
    assert.equal(after.body.data.status, 'succeeded');
    assert.deepEqual(await eventsOf(payment.id), ['payment.requires_capture', 'payment.succeeded']);
    assert.equal(standIn.count('capture', `${payment.id}.capture`), 1);
  });

  test('a refund stays pending until the REFUND notification settles it', async () => {
    const payment = await pay({ paymentMethod: await method(adyenTestCards.approved) });
    const refund = await prism.explain(() =>
      merchant.call('POST', '/refunds/create', { paymentId: payment.id, amount: '1000' }),
    );
    assert.equal(refund.status, 200, refund.raw);
    assert.equal(refund.body.data.status, 'pending');
    assert.equal(standIn.count('refund', refund.body.data.id), 1);
    const settled = await notify([
      standIn.notificationItem({
        eventCode: 'REFUND',
        success: 'true',
        pspReference: 'REF0000000000001',
        originalReference: 'X',
        merchantReference: refund.body.data.id,
        amount: { value: 1000, currency: 'EUR' },
      }),
    ]);
    assert.equal(settled.status, 200);
    const after = await merchant.call('GET', `/refunds/${refund.body.data.id}`);
    assert.equal(after.body.data.status, 'succeeded');
    const paid = await merchant.call('GET', `/payment/${payment.id}`);
    assert.equal(paid.body.data.amountRefunded, '1000');
  });

  test('refuses a notification whose HMAC does not verify, and applies nothing', async () => {
    const payment = await pay({ paymentMethod: await method(adyenTestCards.approved), preAuth: 'y' });
    await prism.explain(() => merchant.call('POST', `/payment/${payment.id}/capture`));
    const forged = await notify([
      standIn.notificationItem(
        { eventCode: 'CAPTURE', success: 'true', pspReference: 'FORGED0000000001', merchantReference: payment.id },
        { badSignature: true },
      ),
    ]);
    assert.equal(forged.status, 401);
    assert.equal((await merchant.call('GET', `/payment/${payment.id}`)).body.data.status, 'processing');
    const unknown = await injectRaw(context, {
      method: 'POST',
      url: '/processor_webhooks/pa_1000000000000000001',
      payload: '{}',
    });
    assert.equal(unknown.statusCode, 404);
  });

  for (const fault of ['resetNext', 'hangNext', 'failNext'] as const) {
    test(`never charges twice: after ${fault} the payment stays processing and the sweep replays the same key`, async () => {
      const chargesBefore = standIn.capturedCharges().length;
      standIn[fault](1);
      const payment = await pay({ paymentMethod: await method(adyenTestCards.approved) });
      assert.equal(payment.status, 'processing');
      assert.deepEqual(await eventsOf(payment.id), []);
      // The sweep takes payments left in processing for 5 minutes.
      context.clock.advance(6 * 60 * 1000);
      await prism.explain(() => context.runJobs());
      const after = await merchant.call('GET', `/payment/${payment.id}`);
      assert.equal(after.body.data.status, 'succeeded', after.raw);
      assert.deepEqual(await eventsOf(payment.id), ['payment.succeeded']);
      // failNext answered 500 before doing anything; reset and hang authorised once, then replayed.
      assert.equal(standIn.count('authorise', `${payment.id}.authorize`), 1);
      assert.equal(standIn.capturedCharges().length, chargesBefore + 1);
    });
  }

  test('a notification that arrives before the answer is applied once, and the replay changes nothing', async () => {
    standIn.hangNext(1);
    const payment = await pay({ paymentMethod: await method(adyenTestCards.approved) });
    assert.equal(payment.status, 'processing');
    assert.equal(standIn.count('authorise', `${payment.id}.authorize`), 1);
    const item = standIn.notificationItem({
      eventCode: 'AUTHORISATION',
      success: 'true',
      pspReference: 'AUTH000000000001',
      merchantReference: payment.id,
      amount: { value: 2500, currency: 'EUR' },
      additionalData: { networkTxReference: '123456789012345' },
    });
    assert.equal((await notify([item])).status, 200);
    assert.equal((await merchant.call('GET', `/payment/${payment.id}`)).body.data.status, 'succeeded');
    context.clock.advance(6 * 60 * 1000);
    await prism.explain(() => context.runJobs());
    assert.equal((await notify([item])).status, 200);
    assert.deepEqual(await eventsOf(payment.id), ['payment.succeeded']);
    assert.equal(standIn.count('authorise', `${payment.id}.authorize`), 1);
    const account = await operator('GET', `/merchants/${merchant.id}/processor_accounts`);
    assert.notEqual(account.body.data.data[0].lastNotificationAt, null);
  });
});
