import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { databaseKind, injectRaw, startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';

/** docs/api.md#sandbox-test-cards: the cards that succeed, with a security code of the right length. */
const succeedingCards: Array<[number: string, brand: string, securityCode: string]> = [
  ['4242424242424242', 'Visa', '123'],
  ['5555555555554444', 'Mastercard', '123'],
  ['378282246310005', 'American Express', '1234'],
  ['3566002020360505', 'JCB', '123'],
  ['6011111111111117', 'Discover', '123'],
];

/** docs/api.md#sandbox-test-cards: the cards that are declined, and the errorCode each gives. */
const decliningCards: Array<[number: string, errorCode: string]> = [
  ['4000000000000002', 'card_declined'],
  ['4000000000000077', 'card_declined'],
  ['4000000000009995', 'insufficient_funds'],
  ['4000000000000069', 'expired_card'],
  ['4000000000000127', 'incorrect_cvc'],
];

const threeDSecureCard = '4000002500003155';
const mitDeclinedCard = '4000000000000341';
const settlesLaterCard = '4000000000000630';
const reversedLaterCard = '4000000000000259';
const highRiskCard = '4000000000004954';

describe(`sandbox test cards (${databaseKind})`, () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await startTestApp();
  });
  after(() => ctx.close());

  async function createMethod(merchant: TestMerchant, cardNo: string, securityCode = '123'): Promise<string> {
    const response = await merchant.call('POST', '/payment_methods/create', {
      type: 'card',
      card: { cardNo, expMonth: '12', expYear: '2030', securityCode },
    });
    assert.equal(response.status, 200, response.raw);
    return response.body.data.id;
  }

  async function createCustomer(merchant: TestMerchant): Promise<string> {
    const response = await merchant.call('POST', '/customers/create', { email: 'holder@example.com' });
    assert.equal(response.status, 200, response.raw);
    return response.body.data.id;
  }

  async function pay(merchant: TestMerchant, body: Record<string, unknown>) {
    const response = await merchant.call('POST', '/payment/create', {
      amount: '1000',
      currency: 'USD',
      confirm: 'true',
      ...body,
    });
    assert.equal(response.status, 200, response.raw);
    return response.body.data;
  }

  async function retrieve(merchant: TestMerchant, id: string) {
    const response = await merchant.call('GET', `/payment/${id}`);
    assert.equal(response.status, 200, response.raw);
    return response.body.data;
  }

  async function eventTypes(merchant: TestMerchant, objectId: string): Promise<string[]> {
    const response = await merchant.call('GET', `/events?objectId=${objectId}`);
    assert.equal(response.status, 200, response.raw);
    return (response.body.data.data as Array<{ type: string }>).map((event) => event.type).reverse();
  }

  /** The path and query of the hosted page, for inject (the origin is the configured public URL). */
  function challengePath(redirectToUrl: string): string {
    const url = new URL(redirectToUrl);
    return `${url.pathname}${url.search}`;
  }

  async function answerChallenge(payment: { id: string; clientSecret: string }, outcome: 'pass' | 'fail') {
    return injectRaw(ctx, {
      method: 'POST',
      url: `/3ds/${payment.id}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ secret: payment.clientSecret, outcome }).toString(),
    });
  }

  for (const [number, brand, securityCode] of succeedingCards) {
    test(`${brand} ${number} succeeds`, async () => {
      const merchant = await ctx.merchant();
      const payment = await pay(merchant, { paymentMethod: await createMethod(merchant, number, securityCode) });
      assert.equal(payment.status, 'succeeded');
      assert.equal(payment.displayStatus, 'succeeded');
      assert.equal(payment.amountReceived, '1000');
      assert.equal(payment.errorCode, null);
      assert.equal(payment.riskInfo.riskMessage, 'risk_pass');
      assert.ok(payment.riskInfo.riskScore >= 0 && payment.riskInfo.riskScore <= 30);
      assert.deepEqual(await eventTypes(merchant, payment.id), ['payment.succeeded']);
    });
  }

  for (const [number, errorCode] of decliningCards) {
    test(`${number} is declined with ${errorCode}: the payment is created as failed (HTTP 200)`, async () => {
      const merchant = await ctx.merchant();
      const payment = await pay(merchant, { paymentMethod: await createMethod(merchant, number) });
      assert.equal(payment.status, 'failed');
      assert.equal(payment.displayStatus, 'failed');
      assert.equal(payment.errorCode, errorCode);
      assert.equal(typeof payment.errorMessage, 'string');
      assert.ok(!payment.errorMessage.includes(number.slice(-4)), 'the message carries no card digits');
      assert.equal(payment.amountReceived, '0');
      assert.deepEqual(await eventTypes(merchant, payment.id), ['payment.failed']);
    });
  }

  test('4000000000000077 is declined on every payment, storing ones included', async () => {
    const merchant = await ctx.merchant();
    const customerId = await createCustomer(merchant);
    const paymentMethod = await createMethod(merchant, '4000000000000077');
    for (const extra of [{}, { customerId, setupFutureUsage: 'on' }, { customerId, preAuth: 'y' }]) {
      const payment = await pay(merchant, { paymentMethod, ...extra });
      assert.equal(payment.status, 'failed');
      assert.equal(payment.errorCode, 'card_declined');
    }
  });

  test('4000002500003155 asks for 3-D Secure; passing the hosted page completes the storing payment and returns to returnUrl', async () => {
    const merchant = await ctx.merchant();
    const customerId = await createCustomer(merchant);
    const paymentMethod = await createMethod(merchant, threeDSecureCard);
    const payment = await pay(merchant, {
      customerId,
      paymentMethod,
      setupFutureUsage: 'on',
      returnUrl: 'https://shop.example.com/return?order=12',
    });
    assert.equal(payment.status, 'requires_action');
    assert.equal(payment.displayStatus, 'incomplete');
    assert.equal(payment.use3D, true);
    assert.deepEqual(payment.nextAction, {
      type: 'redirect',
      redirectToUrl: `${ctx.tessera.publicUrl()}/3ds/${payment.id}?secret=${payment.clientSecret}`,
    });
    assert.deepEqual(await eventTypes(merchant, payment.id), [], 'waiting for the cardholder is not an event');

    const page = await injectRaw(ctx, { method: 'GET', url: challengePath(payment.nextAction.redirectToUrl) });
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.equal(page.headers['referrer-policy'], 'no-referrer');
    assert.match(page.body, /<form method="post" action="\/3ds\/pt_\d{19}">/);
    assert.match(page.body, /name="outcome" value="pass"/);
    assert.match(page.body, /name="outcome" value="fail"/);
    assert.match(page.body, /<dd>\$10\.00<\/dd>/, 'the amount as English writes it');

    const answered = await answerChallenge(payment, 'pass');
    assert.equal(answered.statusCode, 303);
    const location = new URL(String(answered.headers.location));
    assert.equal(`${location.origin}${location.pathname}`, 'https://shop.example.com/return');
    assert.equal(location.searchParams.get('order'), '12');
    assert.equal(location.searchParams.get('payment_id'), payment.id);

    const completed = await retrieve(merchant, payment.id);
    assert.equal(completed.status, 'succeeded');
    assert.equal(completed.use3D, true);
    assert.equal('nextAction' in completed, false);
    assert.deepEqual(await eventTypes(merchant, payment.id), ['payment.succeeded']);
    const method = (await merchant.call('GET', `/payment_methods/${paymentMethod}`)).body.data;
    assert.equal(method.customerId, customerId);

    // CIT meets 3-D Secure again; MIT never does.
    const cit = await pay(merchant, { customerId, paymentMethod, subsequentInitialType: 'cit' });
    assert.equal(cit.status, 'requires_action');
    assert.equal(cit.use3D, true);
    const mit = await pay(merchant, { customerId, paymentMethod, subsequentInitialType: 'mit' });
    assert.equal(mit.status, 'succeeded');
    assert.equal(mit.use3D, false);
    assert.equal('nextAction' in mit, false);
  });

  test('failing the hosted 3-D Secure page fails the payment with authentication_failed and binds nothing', async () => {
    const merchant = await ctx.merchant();
    const customerId = await createCustomer(merchant);
    const paymentMethod = await createMethod(merchant, threeDSecureCard);
    const payment = await pay(merchant, {
      customerId,
      paymentMethod,
      setupFutureUsage: 'on',
      returnUrl: 'https://shop.example.com/return',
    });
    const answered = await answerChallenge(payment, 'fail');
    assert.equal(answered.statusCode, 303);
    const location = new URL(String(answered.headers.location));
    assert.equal(`${location.origin}${location.pathname}`, 'https://shop.example.com/return');
    assert.equal(location.searchParams.get('payment_id'), payment.id);
    const failed = await retrieve(merchant, payment.id);
    assert.equal(failed.status, 'failed');
    assert.equal(failed.errorCode, 'authentication_failed');
    assert.equal(failed.use3D, true);
    assert.deepEqual(await eventTypes(merchant, payment.id), ['payment.failed']);
    const method = (await merchant.call('GET', `/payment_methods/${paymentMethod}`)).body.data;
    assert.equal(method.customerId, null);

    // The page is finished: answering again changes nothing.
    const again = await answerChallenge(payment, 'pass');
    assert.equal(again.statusCode, 303);
    assert.equal((await retrieve(merchant, payment.id)).status, 'failed');
  });

  test('the hosted page needs the payment client secret; anything else is a 404 page', async () => {
    const merchant = await ctx.merchant();
    const payment = await pay(merchant, { paymentMethod: await createMethod(merchant, threeDSecureCard) });
    const wrongSecret = `${payment.id}_secret_${'0'.repeat(64)}`;
    for (const url of [
      `/3ds/${payment.id}?secret=${wrongSecret}`,
      `/3ds/${payment.id}`,
      `/3ds/pt_0000000000000000000?secret=${payment.clientSecret}`,
    ]) {
      const response = await injectRaw(ctx, { method: 'GET', url });
      assert.equal(response.statusCode, 404, url);
      assert.match(String(response.headers['content-type']), /^text\/html/);
    }
    const posted = await answerChallenge({ id: payment.id, clientSecret: wrongSecret }, 'pass');
    assert.equal(posted.statusCode, 404);
    assert.equal((await retrieve(merchant, payment.id)).status, 'requires_action');
  });

  test('without returnUrl the hosted page ends on a result page', async () => {
    const merchant = await ctx.merchant();
    const payment = await pay(merchant, { paymentMethod: await createMethod(merchant, threeDSecureCard) });
    const answered = await answerChallenge(payment, 'pass');
    assert.equal(answered.statusCode, 200);
    assert.match(answered.body, /Authentication complete/);
    assert.equal((await retrieve(merchant, payment.id)).status, 'succeeded');
  });

  test("the hosted page speaks the shopper's browser language, Arabic right to left", async () => {
    const merchant = await ctx.merchant();
    const payment = await pay(merchant, { paymentMethod: await createMethod(merchant, threeDSecureCard) });
    const page = (acceptLanguage: string) =>
      injectRaw(ctx, {
        method: 'GET',
        url: `/3ds/${payment.id}?secret=${payment.clientSecret}`,
        headers: { 'accept-language': acceptLanguage },
      });
    const german = await page('de-DE,de;q=0.9,en;q=0.5');
    assert.equal(german.statusCode, 200);
    assert.match(german.body, /<html lang="de" dir="ltr">/);
    assert.match(german.body, /<h1>3-D-Secure-Authentifizierung<\/h1>/);
    assert.match(german.body, /Ihre Bank bittet Sie, diese Zahlung zu bestätigen\./);
    assert.match(german.body, /<dt>Betrag<\/dt>\s*<dd>10,00\s\$<\/dd>/, 'the amount as German writes it');
    assert.match(german.body, /value="pass">Bestätigen<\/button>/);
    const arabic = await page('ar');
    assert.match(arabic.body, /<html lang="ar" dir="rtl">/);
    assert.match(arabic.body, /يطلب منك البنك تأكيد هذه الدفعة/);
    const english = await page('');
    assert.match(english.body, /<html lang="en" dir="ltr">/);
    assert.match(english.body, /value="pass">Pass<\/button>/);
    // The result, and a page that does not exist, in the same language.
    const answered = await injectRaw(ctx, {
      method: 'POST',
      url: `/3ds/${payment.id}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'accept-language': 'fr' },
      payload: new URLSearchParams({ secret: payment.clientSecret, outcome: 'pass' }).toString(),
    });
    assert.match(answered.body, /<h1>Authentification terminée\.<\/h1>/);
    const missing = await injectRaw(ctx, {
      method: 'GET',
      url: `/3ds/${payment.id}`,
      headers: { 'accept-language': 'ja' },
    });
    assert.equal(missing.statusCode, 404);
    assert.match(missing.body, /この認証ページは存在しません/);
  });

  test('with confirmationMethod manual, passing 3-D Secure returns the payment to requires_confirmation until /confirm', async () => {
    const merchant = await ctx.merchant();
    const payment = await pay(merchant, {
      paymentMethod: await createMethod(merchant, threeDSecureCard),
      confirmationMethod: 'manual',
      returnUrl: 'https://shop.example.com/return',
    });
    assert.equal(payment.status, 'requires_action');
    const answered = await answerChallenge(payment, 'pass');
    assert.equal(answered.statusCode, 303);
    const waiting = await retrieve(merchant, payment.id);
    assert.equal(waiting.status, 'requires_confirmation');
    assert.equal('nextAction' in waiting, false);
    const confirmed = await merchant.call('POST', `/payment/${payment.id}/confirm`, {});
    assert.equal(confirmed.status, 200, confirmed.raw);
    assert.equal(confirmed.body.data.status, 'succeeded');
    assert.equal(confirmed.body.data.use3D, true);
  });

  test('use3D true asks for 3-D Secure with any card', async () => {
    const merchant = await ctx.merchant();
    const payment = await pay(merchant, {
      paymentMethod: await createMethod(merchant, '4242424242424242'),
      use3D: true,
    });
    assert.equal(payment.status, 'requires_action');
    assert.equal(payment.use3D, true);
    await answerChallenge(payment, 'pass');
    assert.equal((await retrieve(merchant, payment.id)).status, 'succeeded');
  });

  test('4000000000000341: the storing payment and CIT succeed, every MIT is declined', async () => {
    const merchant = await ctx.merchant();
    const customerId = await createCustomer(merchant);
    const paymentMethod = await createMethod(merchant, mitDeclinedCard);
    const storing = await pay(merchant, { customerId, paymentMethod, setupFutureUsage: 'on' });
    assert.equal(storing.status, 'succeeded');
    const cit = await pay(merchant, { customerId, paymentMethod, subsequentInitialType: 'cit' });
    assert.equal(cit.status, 'succeeded');
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const mit = await pay(merchant, {
        customerId,
        paymentMethod,
        setupFutureUsage: 'on',
        subsequentInitialType: 'mit',
      });
      assert.equal(mit.status, 'failed');
      assert.equal(mit.displayStatus, 'failed');
      assert.equal(mit.errorCode, 'card_declined');
      assert.deepEqual(await eventTypes(merchant, mit.id), ['payment.failed']);
    }
    // The stored credential survives a declined MIT.
    const method = (await merchant.call('GET', `/payment_methods/${paymentMethod}`)).body.data;
    assert.equal(method.customerId, customerId);
  });

  test('4000000000000630 is processing first and succeeds a few seconds later, with a second event', async () => {
    const merchant = await ctx.merchant();
    const payment = await pay(merchant, { paymentMethod: await createMethod(merchant, settlesLaterCard) });
    assert.equal(payment.status, 'processing');
    assert.equal(payment.displayStatus, 'pending');
    assert.equal(payment.amountReceived, '0');
    assert.deepEqual(await eventTypes(merchant, payment.id), ['payment.processing']);

    // Nothing happens before the processor's delay has passed.
    ctx.clock.advance(1000);
    await ctx.runJobs();
    assert.equal((await retrieve(merchant, payment.id)).status, 'processing');

    ctx.clock.advance(5000);
    await ctx.runJobs();
    const settled = await retrieve(merchant, payment.id);
    assert.equal(settled.status, 'succeeded');
    assert.equal(settled.displayStatus, 'succeeded');
    assert.equal(settled.amountReceived, '1000');
    assert.deepEqual(await eventTypes(merchant, payment.id), ['payment.processing', 'payment.succeeded']);

    // Running the jobs again changes nothing.
    await ctx.runJobs();
    assert.deepEqual(await eventTypes(merchant, payment.id), ['payment.processing', 'payment.succeeded']);
  });

  test('4000000000000259 succeeds, then is reversed after the fact: failed with payment_reversed and a second event', async () => {
    const merchant = await ctx.merchant();
    const payment = await pay(merchant, { paymentMethod: await createMethod(merchant, reversedLaterCard) });
    assert.equal(payment.status, 'succeeded');
    assert.equal(payment.amountReceived, '1000');
    assert.deepEqual(await eventTypes(merchant, payment.id), ['payment.succeeded']);

    ctx.clock.advance(5000);
    await ctx.runJobs();
    const reversed = await retrieve(merchant, payment.id);
    assert.equal(reversed.status, 'failed');
    assert.equal(reversed.displayStatus, 'failed');
    assert.equal(reversed.errorCode, 'payment_reversed');
    assert.equal(typeof reversed.errorMessage, 'string');
    assert.equal(reversed.amountReceived, '0');

    const response = await merchant.call('GET', `/events?objectId=${payment.id}`);
    const events = (response.body.data.data as Array<Record<string, any>>).reverse();
    assert.deepEqual(
      events.map((event) => [event.type, event.data.status, event.data.errorCode]),
      [
        ['payment.succeeded', 'succeeded', null],
        ['payment.failed', 'failed', 'payment_reversed'],
      ],
    );
  });

  test('4000000000004954 is high risk: riskInfo {riskScore: 100, riskMessage: risk_rejected}, failed with risk_rejected', async () => {
    const merchant = await ctx.merchant();
    const payment = await pay(merchant, { paymentMethod: await createMethod(merchant, highRiskCard) });
    assert.deepEqual(payment.riskInfo, { riskScore: 100, riskMessage: 'risk_rejected' });
    assert.equal(payment.status, 'failed');
    assert.equal(payment.errorCode, 'risk_rejected');
    assert.deepEqual(await eventTypes(merchant, payment.id), ['payment.failed']);
  });

  test('riskInfo is null until the payment is authorized', async () => {
    const merchant = await ctx.merchant();
    const response = await merchant.call('POST', '/payment/create', {
      amount: '1000',
      currency: 'USD',
      paymentMethod: await createMethod(merchant, highRiskCard),
    });
    assert.equal(response.body.data.riskInfo, null, response.raw);
    const confirmed = await merchant.call('POST', `/payment/${response.body.data.id}/confirm`, {});
    assert.deepEqual(confirmed.body.data.riskInfo, { riskScore: 100, riskMessage: 'risk_rejected' });
  });
});
