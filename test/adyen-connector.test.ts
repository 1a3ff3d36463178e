/**
 * The Adyen connector through its own interface (LiveProcessor), every request through a Prism
 * proxy holding Adyen's published description to the stand-in for Adyen (docs/processors-adyen.md,
 * Testing). Notifications are in test/adyen-notifications.test.ts.
 */

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createAdyenProcessor } from '../src/processor/adyen/adyen-processor.js';
import type { AuthorizeOutcome, LiveProcessor } from '../src/processor/processor.js';
import { approved, paymentRequest } from './helpers/adyen-requests.js';
import { adyenTestCards, startAdyenStandIn, type AdyenStandIn } from './helpers/adyen-stand-in.js';
import { startPrismProxy, type PrismProxy } from './helpers/prism.js';

let standIn: AdyenStandIn;
let prism: PrismProxy;
let adyen: LiveProcessor;

before(async () => {
  standIn = await startAdyenStandIn();
  prism = await startPrismProxy({ upstream: standIn.url });
  adyen = connector(10_000);
});

after(async () => {
  await prism?.stop();
  await standIn?.close();
});

function connector(timeoutMs: number, apiKey = standIn.apiKey): LiveProcessor {
  return createAdyenProcessor({
    apiKey,
    merchantAccount: standIn.merchantAccount,
    hmacKey: standIn.hmacKey,
    baseUrl: prism.url,
    timeoutMs,
  });
}

/** Runs a call Prism may refuse, with Prism's log in the failure message. */
const viaPrism = <T>(call: () => Promise<T>): Promise<T> => prism.explain(call);
const sent = (idempotencyKey: string) => standIn.sent(idempotencyKey);

describe('authorisations', () => {
  test('reports how long Prism took to start', (t) => {
    t.diagnostic(`prism proxy started in ${prism.startupMs} ms`);
    assert.ok(prism.startupMs > 0);
  });

  test('a one-off payment is sent as an Ecommerce scheme payment without a stored-credential model', async () => {
    const request = paymentRequest(adyenTestCards.approved, { orderNo: 'order-7781' });
    const outcome = approved(await viaPrism(() => adyen.authorize(request)));
    assert.equal(outcome.captured, true);
    assert.equal(outcome.followUp, null);
    assert.match(outcome.processorReference, /^[A-Z0-9]{16}$/);
    const body = sent(request.idempotencyKey);
    assert.deepEqual(body.amount, { value: 1250, currency: 'EUR' });
    assert.equal(body.reference, request.paymentId);
    assert.equal(body.merchantOrderReference, 'order-7781');
    assert.equal(body.merchantAccount, standIn.merchantAccount);
    assert.equal(body.shopperInteraction, 'Ecommerce');
    assert.equal(body.channel, 'Web');
    assert.equal(body.returnUrl, request.returnUrl);
    assert.equal(body.recurringProcessingModel, undefined);
    assert.equal(body.storePaymentMethod, undefined);
    assert.equal(body.additionalData, undefined);
    assert.deepEqual(body.paymentMethod, {
      type: 'scheme',
      number: adyenTestCards.approved,
      expiryMonth: '03',
      expiryYear: '2030',
      cvc: '737',
    });
  });

  test('the first storing payment asks Adyen to store the card and keeps the network reference it returns', async () => {
    const request = paymentRequest(adyenTestCards.approved, { initiator: 'first_storing', customerId: 'cus_4k2j9d' });
    const outcome = approved(await viaPrism(() => adyen.authorize(request)));
    const body = sent(request.idempotencyKey);
    assert.equal(body.storePaymentMethod, true);
    assert.equal(body.shopperReference, 'cus_4k2j9d');
    assert.equal(body.shopperInteraction, 'Ecommerce');
    assert.equal(body.recurringProcessingModel, 'CardOnFile');
    assert.match(outcome.networkTransactionId, /^\d{15}$/);
    assert.notEqual(outcome.networkTransactionId, outcome.processorReference);
  });

  test('a CIT rides on the stored credential: CardOnFile, Ecommerce, the network reference in paymentMethod', async () => {
    const request = paymentRequest(adyenTestCards.approved, {
      initiator: 'cit',
      customerId: 'cus_4k2j9d',
      networkTransactionId: '559812345678901',
    });
    const outcome = approved(await viaPrism(() => adyen.authorize(request)));
    const body = sent(request.idempotencyKey);
    assert.equal(body.shopperInteraction, 'Ecommerce');
    assert.equal(body.recurringProcessingModel, 'CardOnFile');
    assert.equal((body.paymentMethod as Record<string, unknown>).networkPaymentReference, '559812345678901');
    assert.equal(body.storePaymentMethod, undefined);
    assert.equal(outcome.networkTransactionId, '559812345678901');
  });

  test('an MIT is ContAuth and UnscheduledCardOnFile with the network reference and no security code', async () => {
    const request = paymentRequest(adyenTestCards.approved, {
      initiator: 'mit',
      customerId: 'cus_4k2j9d',
      networkTransactionId: '559812345678902',
    });
    request.card.securityCode = null;
    approved(await viaPrism(() => adyen.authorize(request)));
    const body = sent(request.idempotencyKey);
    const method = body.paymentMethod as Record<string, unknown>;
    assert.equal(body.shopperInteraction, 'ContAuth');
    assert.equal(body.recurringProcessingModel, 'UnscheduledCardOnFile');
    assert.equal(method.networkPaymentReference, '559812345678902');
    assert.equal('cvc' in method, false);
  });

  test('a payment of a recurring series is a Subscription', async () => {
    const request = paymentRequest(adyenTestCards.approved, {
      initiator: 'mit',
      recurring: true,
      customerId: 'cus_4k2j9d',
      networkTransactionId: '559812345678903',
    });
    request.card.securityCode = null;
    approved(await viaPrism(() => adyen.authorize(request)));
    const body = sent(request.idempotencyKey);
    assert.equal(body.recurringProcessingModel, 'Subscription');
    assert.equal(body.shopperInteraction, 'ContAuth');
  });

  test('an answer Adyen has not decided yet (Received) is pending', async () => {
    const outcome = await viaPrism(() => adyen.authorize(paymentRequest(adyenTestCards.received)));
    assert.equal(outcome.kind, 'pending');
  });
});

describe('declines keep Adyen reason', () => {
  const cases = [
    { card: adyenTestCards.refused, code: 'card_declined', reason: 'Refused' },
    { card: adyenTestCards.notEnoughBalance, code: 'insufficient_funds', reason: 'Not enough balance' },
    { card: adyenTestCards.expired, code: 'expired_card', reason: 'Expired Card' },
    { card: adyenTestCards.cvcDeclined, code: 'incorrect_cvc', reason: 'CVC Declined' },
    { card: adyenTestCards.fraud, code: 'risk_rejected', reason: 'FRAUD' },
    { card: adyenTestCards.issuerSuspectedFraud, code: 'risk_rejected', reason: 'Issuer Suspected Fraud' },
    { card: adyenTestCards.acquirerError, code: 'processing_error', reason: 'Acquirer Error' },
  ] as const;
  for (const { card, code, reason } of cases) {
    test(`"${reason}" declines as ${code}`, async () => {
      const outcome = await viaPrism(() => adyen.authorize(paymentRequest(card)));
      assert.equal(outcome.kind, 'declined', JSON.stringify(outcome));
      if (outcome.kind !== 'declined') return;
      assert.equal(outcome.code, code);
      assert.equal(outcome.processorReason, reason);
      assert.ok(outcome.message.length > 0);
      assert.equal(outcome.message.includes(card), false);
    });
  }

  test("Adyen's account score is the payment's risk score", async () => {
    const outcome = await viaPrism(() => adyen.authorize(paymentRequest(adyenTestCards.fraud)));
    assert.equal(outcome.risk.riskScore, 100);
  });
});

describe('3-D Secure by redirect', () => {
  async function shopperReturns(outcome: AuthorizeOutcome, returnUrl: string): Promise<Record<string, string>> {
    assert.equal(outcome.kind, 'redirect', JSON.stringify(outcome));
    if (outcome.kind !== 'redirect') return {};
    assert.equal(outcome.action.method, 'GET');
    const issuerPage = await fetch(outcome.action.url, { redirect: 'manual' });
    assert.equal(issuerPage.status, 302);
    const back = new URL(issuerPage.headers.get('location') ?? '');
    assert.equal(`${back.origin}${back.pathname}`, returnUrl);
    return Object.fromEntries(back.searchParams);
  }

  test('the shopper is sent to the action, comes back to returnUrl, and /payments/details authorises', async () => {
    const request = paymentRequest(adyenTestCards.threeDSecure);
    const params = await shopperReturns(await viaPrism(() => adyen.authorize(request)), request.returnUrl);
    assert.ok(params.redirectResult);
    const outcome = await viaPrism(() =>
      adyen.completeRedirect({
        paymentId: request.paymentId,
        processorReference: null,
        params,
        idempotencyKey: `${request.paymentId}.details`,
      }),
    );
    approved(outcome);
    const details = standIn.received.find((entry) => entry.idempotencyKey === `${request.paymentId}.details`);
    assert.deepEqual(details?.body, { details: { redirectResult: params.redirectResult } });
  });

  test('a failed authentication declines as authentication_failed', async () => {
    const request = paymentRequest(adyenTestCards.threeDSecureFails);
    const params = await shopperReturns(await viaPrism(() => adyen.authorize(request)), request.returnUrl);
    const outcome = await viaPrism(() =>
      adyen.completeRedirect({
        paymentId: request.paymentId,
        processorReference: null,
        params,
        idempotencyKey: `${request.paymentId}.details`,
      }),
    );
    assert.equal(outcome.kind, 'declined');
    if (outcome.kind !== 'declined') return;
    assert.equal(outcome.code, 'authentication_failed');
    assert.equal(outcome.processorReason, '3D Not Authenticated');
  });

  test('an issuer reached by a form post returns MD and PaRes, which alone go to /payments/details', async () => {
    const request = paymentRequest(adyenTestCards.threeDSecureFormPost);
    const outcome = await viaPrism(() => adyen.authorize(request));
    assert.ok(outcome.kind === 'redirect', JSON.stringify(outcome));
    assert.equal(outcome.action.method, 'POST');
    assert.equal(outcome.action.data.TermUrl, request.returnUrl);
    const issuerPage = await fetch(outcome.action.url, {
      method: 'POST',
      body: new URLSearchParams(outcome.action.data),
    });
    const fields = Object.fromEntries(
      [...(await issuerPage.text()).matchAll(/name="(\w+)" value="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]),
    );
    const key = `${request.paymentId}.details`;
    const params = { ...fields, browserAdded: 'dropped' };
    const completed = viaPrism(() =>
      adyen.completeRedirect({ paymentId: request.paymentId, processorReference: null, params, idempotencyKey: key }),
    );
    approved(await completed);
    assert.deepEqual(sent(key), { details: { MD: fields.MD, PaRes: fields.PaRes } });
  });
});

describe('native 3-D Secure', () => {
  test('an IdentifyShopper with a threeDS2 action, which no Tessera page can show, fails at once as processing_error', async () => {
    const outcome = await viaPrism(() => adyen.authorize(paymentRequest(adyenTestCards.nativeThreeDSecure)));
    assert.ok(outcome.kind === 'declined', JSON.stringify(outcome));
    assert.equal(outcome.code, 'processing_error');
    assert.match(outcome.processorReason ?? '', /IdentifyShopper with a threeDS2 action/);
  });
});

describe('pre-authorization, capture, cancel, refund', () => {
  test('a pre-authorization holds the funds; capture is pending until the CAPTURE notification and charges once', async () => {
    const request = paymentRequest(adyenTestCards.approved, { capture: false });
    const outcome = approved(await viaPrism(() => adyen.authorize(request)));
    assert.equal(outcome.captured, false);
    assert.deepEqual(sent(request.idempotencyKey).additionalData, { manualCapture: 'true' });
    const charges = () => standIn.capturedCharges().filter((c) => c.paymentPspReference === outcome.processorReference);
    assert.equal(charges().length, 0);

    const capture = {
      paymentId: request.paymentId,
      paymentReference: outcome.processorReference,
      amount: 1000n,
      currency: 'EUR',
      idempotencyKey: `${request.paymentId}.capture`,
    };
    assert.deepEqual(await viaPrism(() => adyen.capture(capture)), { kind: 'pending' });
    assert.deepEqual(await viaPrism(() => adyen.capture(capture)), { kind: 'pending' });
    assert.deepEqual(
      charges().map((c) => c.amount),
      [{ value: 1000, currency: 'EUR' }],
    );
    assert.equal(standIn.count('capture', capture.idempotencyKey), 1);
    assert.deepEqual(sent(capture.idempotencyKey), {
      merchantAccount: standIn.merchantAccount,
      amount: { value: 1000, currency: 'EUR' },
      reference: request.paymentId,
    });
  });

  test('a cancel releases a pre-authorization at Adyen', async () => {
    const request = paymentRequest(adyenTestCards.approved, { capture: false });
    const outcome = approved(await viaPrism(() => adyen.authorize(request)));
    const key = `${request.paymentId}.cancel`;
    await viaPrism(() =>
      adyen.cancel({ paymentId: request.paymentId, paymentReference: outcome.processorReference, idempotencyKey: key }),
    );
    assert.equal(standIn.count('cancel', key), 1);
    const cancel = standIn.received.find((entry) => entry.idempotencyKey === key);
    assert.equal(cancel?.path, `/payments/${outcome.processorReference}/cancels`);
    assert.deepEqual(cancel?.body, { merchantAccount: standIn.merchantAccount, reference: request.paymentId });
  });

  test('a refund is accepted with the refund id as its reference and settled by notification only', async () => {
    const request = paymentRequest(adyenTestCards.approved);
    const outcome = approved(await viaPrism(() => adyen.authorize(request)));
    const refundId = `re_${randomBytes(8).toString('hex')}`;
    const refundRequest = {
      paymentId: request.paymentId,
      paymentReference: outcome.processorReference,
      refundId,
      amount: 500n,
      currency: 'EUR',
      idempotencyKey: refundId,
    };
    const refund = await viaPrism(() => adyen.refund(refundRequest));
    assert.deepEqual(await viaPrism(() => adyen.refund(refundRequest)), refund);
    assert.equal(standIn.count('refund', refundId), 1);
    assert.equal(refund.kind, 'accepted');
    if (refund.kind !== 'accepted') return;
    assert.equal(refund.followUp, null);
    assert.match(refund.processorReference, /^[A-Z0-9]{16}$/);
    assert.deepEqual(sent(refundId), {
      merchantAccount: standIn.merchantAccount,
      amount: { value: 500, currency: 'EUR' },
      reference: refundId,
    });
    assert.deepEqual(await adyen.resolveRefund(refund.processorReference), { kind: 'pending' });
    await assert.rejects(adyen.resolveFollowUp(outcome.processorReference, 'settle'), /no follow-up/);
  });
});

describe('never twice', () => {
  test('the same authorisation asked twice with its key is performed once and answered the same', async () => {
    const request = paymentRequest(adyenTestCards.approved);
    const first = approved(await viaPrism(() => adyen.authorize(request)));
    const second = approved(await viaPrism(() => adyen.authorize(request)));
    assert.equal(second.processorReference, first.processorReference);
    assert.equal(standIn.count('authorise', request.idempotencyKey), 1);
    assert.equal(standIn.capturedCharges().filter((c) => c.paymentPspReference === first.processorReference).length, 1);
  });

  test('another body under the same key is refused by Adyen and throws', async () => {
    const request = paymentRequest(adyenTestCards.approved);
    await viaPrism(() => adyen.authorize(request));
    await assert.rejects(adyen.authorize({ ...request, amount: 9999n }), /HTTP 422.*errorCode 704/);
    assert.equal(standIn.count('authorise', request.idempotencyKey), 1);
  });

  test('a 500 throws with the status and errorCode; asked again with the key, it authorises once', async () => {
    const request = paymentRequest(adyenTestCards.approved);
    standIn.failNext(1);
    await assert.rejects(adyen.authorize(request), (err: Error) => {
      assert.match(err.message, /HTTP 500/);
      assert.match(err.message, /errorCode 905/);
      return true;
    });
    approved(await viaPrism(() => adyen.authorize(request)));
    assert.equal(standIn.count('authorise', request.idempotencyKey), 1);
  });

  test('a timeout after Adyen authorised throws; the replay gets the first answer, one charge', async () => {
    const request = paymentRequest(adyenTestCards.approved);
    standIn.hangNext(1);
    await assert.rejects(connector(1500).authorize(request), /failed without an answer \(TimeoutError/);
    const outcome = approved(await viaPrism(() => adyen.authorize(request)));
    assert.equal(standIn.count('authorise', request.idempotencyKey), 1);
    assert.equal(
      standIn.capturedCharges().filter((c) => c.paymentPspReference === outcome.processorReference).length,
      1,
    );
  });

  test('a connection reset after Adyen authorised throws; the replay gets the first answer, one charge', async () => {
    const request = paymentRequest(adyenTestCards.approved);
    standIn.resetNext(1);
    await assert.rejects(adyen.authorize(request));
    const outcome = approved(await viaPrism(() => adyen.authorize(request)));
    assert.equal(standIn.count('authorise', request.idempotencyKey), 1);
    assert.equal(
      standIn.capturedCharges().filter((c) => c.paymentPspReference === outcome.processorReference).length,
      1,
    );
  });
});

describe('without Prism between', () => {
  test('a connection reset straight from Adyen throws without an answer; the replay is not a second charge', async () => {
    const direct = createAdyenProcessor({
      apiKey: standIn.apiKey,
      merchantAccount: standIn.merchantAccount,
      hmacKey: standIn.hmacKey,
      baseUrl: `${standIn.url}/v71`,
      timeoutMs: 10_000,
    });
    const request = paymentRequest(adyenTestCards.approved);
    standIn.resetNext(1);
    await assert.rejects(direct.authorize(request), /POST \/payments failed without an answer/);
    approved(await direct.authorize(request));
    assert.equal(standIn.count('authorise', request.idempotencyKey), 1);
  });
});

describe('secrets stay out of errors', () => {
  test('a refused API key, a 500 and a timeout throw messages without the key, the HMAC key or the card', async () => {
    const messages: string[] = [];
    const collect = async (call: () => Promise<unknown>) => {
      await assert.rejects(call(), (err: Error) => {
        messages.push(err.message, String(err.stack));
        return true;
      });
    };
    const wrongKey = `AQE_wrong_${randomBytes(12).toString('hex')}`;
    await collect(() => connector(10_000, wrongKey).authorize(paymentRequest(adyenTestCards.approved)));
    assert.match(messages[0]!, /HTTP 401/);
    standIn.failNext(1);
    await collect(() => adyen.authorize(paymentRequest(adyenTestCards.approved)));
    standIn.hangNext(1);
    await collect(() => connector(1000).authorize(paymentRequest(adyenTestCards.approved)));
    for (const message of messages) {
      assert.equal(message.includes(wrongKey), false);
      assert.equal(message.includes(standIn.apiKey), false);
      assert.equal(message.toLowerCase().includes(standIn.hmacKey.toLowerCase()), false);
      assert.equal(message.includes(adyenTestCards.approved), false);
    }
  });
});
