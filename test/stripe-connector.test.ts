import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Stripe from 'stripe';
import { manualClock } from '../src/clock.js';
import {
  NotificationRefused,
  type AuthorizeOutcome,
  type AuthorizeRequest,
  type LiveProcessor,
  type ProcessorNotification,
} from '../src/processor/processor.js';
import { parseStripeBaseUrl } from '../src/processor/stripe/client.js';
import { createStripeProcessor } from '../src/processor/stripe/connector.js';
import { startStripeStandIn, stripeTestCards as cards, type StripeStandIn } from './helpers/stripe-stand-in.js';

let standIn: StripeStandIn;
let stripe: LiveProcessor;
const clock = manualClock();
let sequence = 0;

before(async () => {
  standIn = await startStripeStandIn();
  stripe = processorFor(standIn, 5000);
});
after(() => standIn.close());

function processorFor(server: StripeStandIn, timeoutMs: number, secretKey = server.secretKey): LiveProcessor {
  return createStripeProcessor({
    secretKey,
    webhookSecret: server.webhookSecret,
    baseUrl: server.url,
    timeoutMs,
    clock,
  });
}

function request(number: string, changes: Partial<AuthorizeRequest> = {}): AuthorizeRequest {
  sequence += 1;
  const paymentId = `pt_${String(sequence).padStart(19, '0')}`;
  return {
    paymentId,
    idempotencyKey: `${paymentId}.authorize`,
    amount: 1999n,
    currency: 'USD',
    card: { number, brand: 'visa', expMonth: '04', expYear: '2030', securityCode: '123', holderName: null },
    capture: true,
    initiator: 'one_off',
    recurring: false,
    networkTransactionId: null,
    threeDSecure: 'not_requested',
    customerId: null,
    orderNo: null,
    returnUrl: `http://127.0.0.1:1/3ds/${paymentId}/return`,
    ...changes,
  };
}

/** What the connector sent for this idempotency key (the card number masked by the stand-in). */
function sent(idempotencyKey: string): any {
  const found = standIn.requests.filter((recorded) => recorded.idempotencyKey === idempotencyKey);
  assert.ok(found.length > 0, `no request with the key ${idempotencyKey}`);
  return found[found.length - 1]!.params;
}

function shown(value: unknown): string {
  return JSON.stringify(value, (_key, item) => (typeof item === 'bigint' ? String(item) : item));
}

function approved(outcome: AuthorizeOutcome): Extract<AuthorizeOutcome, { kind: 'approved' }> {
  assert.equal(outcome.kind, 'approved', `expected approval, got ${shown(outcome)}`);
  return outcome as Extract<AuthorizeOutcome, { kind: 'approved' }>;
}

function declined(outcome: AuthorizeOutcome): Extract<AuthorizeOutcome, { kind: 'declined' }> {
  assert.equal(outcome.kind, 'declined', `expected a decline, got ${shown(outcome)}`);
  return outcome as Extract<AuthorizeOutcome, { kind: 'declined' }>;
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (caught) {
    assert.ok(caught instanceof Error);
    return caught;
  }
  assert.fail('expected the call to throw');
}

describe('Stripe connector: payments', () => {
  test('a one-off payment is one confirmed, captured PaymentIntent carrying the payment id, order and return URL', async () => {
    const req = request(cards.succeeds, { orderNo: 'order-1' });
    const outcome = approved(await stripe.authorize(req));
    assert.match(outcome.processorReference, /^pi_/);
    assert.equal(outcome.captured, true);
    assert.equal(outcome.followUp, null);
    assert.match(outcome.networkTransactionId, /^\d{15}$/);
    assert.equal(outcome.risk.riskMessage, 'risk_pass');
    // 2.9 % + 30 of 19.99: the fee from the expanded balance transaction.
    assert.equal(outcome.processorFee, 88n);
    const params = sent(req.idempotencyKey);
    assert.equal(params.amount, '1999');
    assert.equal(params.currency, 'usd');
    assert.equal(params.confirm, 'true');
    assert.deepEqual(params.metadata, { tessera_payment_id: req.paymentId, order_no: 'order-1' });
    assert.equal(params.return_url, req.returnUrl);
    assert.deepEqual(params.expand, ['latest_charge', 'latest_charge.balance_transaction']);
    assert.deepEqual(params.payment_method_data, {
      type: 'card',
      card: { number: '…4242', exp_month: '4', exp_year: '2030', cvc: '123' },
    });
    for (const absent of ['capture_method', 'setup_future_usage', 'off_session', 'payment_method_options']) {
      assert.equal(params[absent], undefined, `${absent} is not sent on a one-off payment`);
    }
    assert.equal(standIn.count('confirmations', req.idempotencyKey), 1);
  });

  test('a first storing payment asks Stripe to keep the credential for off-session use, and names the holder', async () => {
    const req = request(cards.succeeds, { initiator: 'first_storing', customerId: 'cus_1' });
    req.card.holderName = 'Ada Lovelace';
    const outcome = approved(await stripe.authorize(req));
    assert.match(outcome.networkTransactionId, /^\d{15}$/);
    const params = sent(req.idempotencyKey);
    assert.equal(params.setup_future_usage, 'off_session');
    assert.deepEqual(params.payment_method_data.billing_details, { name: 'Ada Lovelace' });
    assert.equal(params.off_session, undefined);
  });

  test('a CIT is an on-session payment: no off_session, no MIT exemption', async () => {
    const req = request(cards.succeeds, { initiator: 'cit', networkTransactionId: '123456789012345' });
    approved(await stripe.authorize(req));
    const params = sent(req.idempotencyKey);
    assert.equal(params.off_session, undefined);
    assert.equal(params.payment_method_options, undefined);
    assert.equal(params.setup_future_usage, undefined);
  });

  test('an MIT is off-session with the stored credential network reference, and without a security code', async () => {
    const req = request(cards.succeeds, { initiator: 'mit', networkTransactionId: '123456789012345' });
    req.card.securityCode = null;
    approved(await stripe.authorize(req));
    const params = sent(req.idempotencyKey);
    assert.equal(params.off_session, 'true');
    assert.deepEqual(params.payment_method_options, {
      card: { mit_exemption: { network_transaction_id: '123456789012345' } },
    });
    assert.equal(params.payment_method_data.card.cvc, undefined);
  });

  test('an MIT the issuer wants authenticated is declined authentication_failed', async () => {
    const req = request(cards.threeDSecure, { initiator: 'mit', networkTransactionId: '123456789012345' });
    req.card.securityCode = null;
    const outcome = declined(await stripe.authorize(req));
    assert.equal(outcome.code, 'authentication_failed');
    assert.equal(outcome.processorReason, 'authentication_required');
  });

  test('a pre-authorization holds the funds; capture takes the amount asked, once', async () => {
    const req = request(cards.succeeds, { capture: false });
    const outcome = approved(await stripe.authorize(req));
    assert.equal(outcome.captured, false);
    assert.equal(outcome.processorFee, null);
    assert.equal(sent(req.idempotencyKey).capture_method, 'manual');
    const capture = {
      paymentId: req.paymentId,
      paymentReference: outcome.processorReference,
      amount: 1500n,
      currency: 'USD',
      idempotencyKey: `${req.paymentId}.capture`,
    };
    assert.deepEqual(await stripe.capture(capture), { kind: 'captured' });
    assert.deepEqual(await stripe.capture(capture), { kind: 'captured' }, 'the same capture again is the first answer');
    assert.equal(standIn.count('captures', capture.idempotencyKey), 1);
    assert.equal(sent(capture.idempotencyKey).amount_to_capture, '1500');
    assert.equal(standIn.api.intents.get(outcome.processorReference)!.amount_received, 1500);
    const again = await stripe.capture({ ...capture, idempotencyKey: `${req.paymentId}.capture.2` });
    assert.equal(again.kind, 'failed', 'a captured payment cannot be captured again');
  });

  test('a pre-authorization can be canceled, and canceling it again is not an error', async () => {
    const req = request(cards.succeeds, { capture: false });
    const outcome = approved(await stripe.authorize(req));
    const cancel = {
      paymentId: req.paymentId,
      paymentReference: outcome.processorReference,
      idempotencyKey: `${req.paymentId}.cancel`,
    };
    await stripe.cancel(cancel);
    assert.equal(standIn.api.intents.get(outcome.processorReference)!.status, 'canceled');
    await stripe.cancel({ ...cancel, idempotencyKey: `${req.paymentId}.cancel.again` });
    assert.equal(standIn.count('cancels', cancel.idempotencyKey), 1);
  });

  test('a payment Stripe leaves processing is pending', async () => {
    standIn.api.nextProcessing = 1;
    const outcome = await stripe.authorize(request(cards.succeeds));
    assert.equal(outcome.kind, 'pending');
    assert.match((outcome as { processorReference: string }).processorReference, /^pi_/);
  });

  test('a request Stripe refuses (below its minimum amount) fails the payment with Stripe code kept', async () => {
    const outcome = declined(await stripe.authorize(request(cards.succeeds, { amount: 10n })));
    assert.equal(outcome.code, 'processing_error');
    assert.equal(outcome.processorReason, 'amount_too_small');
  });
});

describe('Stripe connector: declines', () => {
  const expected: Array<[string, string, string]> = [
    [cards.genericDecline, 'card_declined', 'generic_decline'],
    [cards.insufficientFunds, 'insufficient_funds', 'insufficient_funds'],
    [cards.expired, 'expired_card', 'expired_card'],
    [cards.incorrectCvc, 'incorrect_cvc', 'incorrect_cvc'],
    [cards.fraudulent, 'risk_rejected', 'fraudulent'],
    [cards.lostCard, 'risk_rejected', 'lost_card'],
    [cards.stolenCard, 'risk_rejected', 'stolen_card'],
    [cards.processingError, 'processing_error', 'processing_error'],
  ];
  for (const [number, code, reason] of expected) {
    test(`card ${number.slice(-4)} is declined ${code}, Stripe's reason ${reason} kept`, async () => {
      const req = request(number);
      const outcome = declined(await stripe.authorize(req));
      assert.equal(outcome.code, code);
      assert.equal(outcome.processorReason, reason);
      assert.match(outcome.processorReference, /^pi_/);
      assert.match(outcome.message, /^[A-Z].*\.$/);
      assert.ok(!shown(outcome).includes(number), 'the outcome carries no card number');
      if (code === 'risk_rejected') assert.equal(outcome.risk.riskMessage, 'risk_rejected');
      // Stripe replays a card error for the same key: still one attempt.
      declined(await stripe.authorize(req));
      assert.equal(standIn.count('confirmations', req.idempotencyKey), 1);
    });
  }
});

describe('Stripe connector: 3-D Secure', () => {
  async function redirected(passed: boolean) {
    const req = request(cards.threeDSecure);
    const outcome = await stripe.authorize(req);
    assert.equal(outcome.kind, 'redirect');
    const redirect = outcome as Extract<AuthorizeOutcome, { kind: 'redirect' }>;
    assert.equal(redirect.action.method, 'GET');
    assert.deepEqual(redirect.action.data, {});
    // The shopper's browser: Stripe's page, then back to Tessera's return URL.
    const page = await fetch(`${redirect.action.url}${passed ? '' : '?result=fail'}`, { redirect: 'manual' });
    assert.equal(page.status, 302);
    const back = new URL(page.headers.get('location')!);
    assert.equal(`${back.origin}${back.pathname}`, req.returnUrl);
    assert.equal(back.searchParams.get('payment_intent'), redirect.processorReference);
    const result = await stripe.completeRedirect({
      paymentId: req.paymentId,
      processorReference: redirect.processorReference,
      params: Object.fromEntries(back.searchParams),
      idempotencyKey: `${req.paymentId}.details`,
    });
    return { req, redirect, result };
  }

  test('a card that needs 3-D Secure redirects the shopper, and the payment is approved once they pass', async () => {
    const { redirect, result } = await redirected(true);
    const outcome = approved(result);
    assert.equal(outcome.processorReference, redirect.processorReference);
    assert.match(outcome.networkTransactionId, /^\d{15}$/);
  });

  test('a shopper who fails 3-D Secure leaves the payment declined authentication_failed', async () => {
    const { result } = await redirected(false);
    const outcome = declined(result);
    assert.equal(outcome.code, 'authentication_failed');
    assert.equal(outcome.processorReason, 'payment_intent_authentication_failure');
  });
});

describe('Stripe connector: refunds', () => {
  async function captured(number: string) {
    const req = request(number);
    return { req, outcome: approved(await stripe.authorize(req)) };
  }

  test('a refund succeeds once per refund id, with the refund id kept at Stripe', async () => {
    const { req, outcome } = await captured(cards.succeeds);
    const refund = {
      paymentId: req.paymentId,
      paymentReference: outcome.processorReference,
      refundId: 're_1000000000000000001',
      amount: 500n,
      currency: 'USD',
      idempotencyKey: 're_1000000000000000001',
    };
    const first = await stripe.refund(refund);
    assert.equal(first.kind, 'succeeded');
    assert.deepEqual(await stripe.refund(refund), first, 'asking again gives the first answer');
    assert.equal(standIn.count('refunds', refund.idempotencyKey), 1);
    const params = sent(refund.idempotencyKey);
    assert.equal(params.payment_intent, outcome.processorReference);
    assert.equal(params.amount, '500');
    assert.equal(params.metadata.tessera_refund_id, refund.refundId);
  });

  test('a pending refund is accepted, settles by notification, and resolveRefund reads its state', async () => {
    const { req, outcome } = await captured(cards.refundPending);
    const refundId = 're_1000000000000000002';
    const answer = await stripe.refund({
      paymentId: req.paymentId,
      paymentReference: outcome.processorReference,
      refundId,
      amount: 1999n,
      currency: 'USD',
      idempotencyKey: refundId,
    });
    assert.equal(answer.kind, 'accepted');
    const reference = (answer as { processorReference: string }).processorReference;
    assert.deepEqual(answer, { kind: 'accepted', processorReference: reference, followUp: null });
    assert.deepEqual(await stripe.resolveRefund(reference), { kind: 'pending' });
    Object.assign(standIn.api.refunds.get(reference)!, {
      status: 'failed',
      failure_reason: 'expired_or_canceled_card',
    });
    assert.deepEqual(await stripe.resolveRefund(reference), { kind: 'failed', reason: 'card_closed' });
  });

  test('a refund of more than was captured fails without an exception', async () => {
    const { req, outcome } = await captured(cards.succeeds);
    const answer = await stripe.refund({
      paymentId: req.paymentId,
      paymentReference: outcome.processorReference,
      refundId: 're_1000000000000000003',
      amount: 5000n,
      currency: 'USD',
      idempotencyKey: 're_1000000000000000003',
    });
    assert.deepEqual(answer, { kind: 'failed', processorReference: null, reason: 'processing_error' });
  });
});

describe('Stripe connector: never twice', () => {
  test('the same authorization asked twice is one charge, the same PaymentIntent', async () => {
    const req = request(cards.succeeds);
    const before = standIn.capturedCharges();
    const first = approved(await stripe.authorize(req));
    const second = approved(await stripe.authorize(req));
    assert.equal(second.processorReference, first.processorReference);
    assert.equal(standIn.count('confirmations', req.idempotencyKey), 1);
    assert.equal(standIn.capturedCharges() - before, 1);
  });

  test('a 5xx throws with the status and Stripe error type; the replay with the same key charges once', async () => {
    const req = request(cards.succeeds);
    standIn.failNext(1);
    const err = await rejection(stripe.authorize(req));
    assert.match(err.message, /status 500/);
    assert.match(err.message, /api_error/);
    assert.equal(standIn.count('confirmations', req.idempotencyKey), 0);
    approved(await stripe.authorize(req));
    assert.equal(standIn.count('confirmations', req.idempotencyKey), 1);
  });

  test('a timeout after Stripe charged throws; the replay with the same key gets the first charge', async () => {
    const impatient = processorFor(standIn, 300);
    const req = request(cards.succeeds);
    standIn.hangNext(1);
    const err = await rejection(impatient.authorize(req));
    assert.match(err.message, /timed out/);
    assert.equal(standIn.count('confirmations', req.idempotencyKey), 1, 'Stripe did charge');
    const replay = approved(await impatient.authorize(req));
    assert.equal(standIn.count('confirmations', req.idempotencyKey), 1);
    assert.equal(standIn.api.intents.get(replay.processorReference)!.metadata.tessera_payment_id, req.paymentId);
  });

  test('connections reset after Stripe charged throw; the replay with the same key charges once', async () => {
    const req = request(cards.succeeds);
    // The client asks once more by itself after a reset, with the same key: two resets in a row.
    standIn.resetNext(2);
    const err = await rejection(stripe.authorize(req));
    assert.match(err.message, /connection failed/);
    approved(await stripe.authorize(req));
    assert.equal(standIn.count('confirmations', req.idempotencyKey), 1);
  });

  test('the same key with other parameters is refused, not charged', async () => {
    const req = request(cards.succeeds);
    approved(await stripe.authorize(req));
    const err = await rejection(stripe.authorize({ ...req, amount: 2999n }));
    assert.match(err.message, /idempotency_error/);
    assert.equal(standIn.count('confirmations', req.idempotencyKey), 1);
  });

  test('no error carries the secret key or the card number', async () => {
    const wrongKey = `sk_test_${'x'.repeat(32)}`;
    const errors = [
      await rejection(processorFor(standIn, 5000, wrongKey).authorize(request(cards.succeeds))),
      await (async () => {
        standIn.failNext(1, 503);
        return rejection(stripe.authorize(request(cards.succeeds)));
      })(),
      await rejection(
        stripe.completeRedirect({
          paymentId: 'pt_1',
          processorReference: 'pi_missing',
          params: {},
          idempotencyKey: 'pt_1.details',
        }),
      ),
    ];
    assert.match(errors[0]!.message, /status 401/);
    for (const err of errors) {
      const text = `${err.message} ${err.stack ?? ''}`;
      assert.ok(!text.includes(wrongKey) && !text.includes(standIn.secretKey), 'the error carries the secret key');
      assert.ok(!text.includes(cards.succeeds), 'the error carries the card number');
    }
  });

  test('resolveFollowUp is never announced by Stripe and throws', async () => {
    await rejection(stripe.resolveFollowUp('pi_x', 'settle'));
  });
});

describe('Stripe connector: notifications', () => {
  async function intentOf(req: AuthorizeRequest) {
    const outcome = await stripe.authorize(req);
    return standIn.api.intents.get((outcome as { processorReference: string }).processorReference)!;
  }

  function parse(event: { headers: Record<string, string>; rawBody: string }): ProcessorNotification[] {
    const batch = stripe.parseNotification(event);
    assert.deepEqual(batch.answer, { contentType: 'application/json', body: '{"received":true}' });
    return batch.notifications;
  }

  test('payment_intent.succeeded is an approved authorisation of the Tessera payment', async () => {
    const req = request(cards.succeeds);
    const intent = await intentOf(req);
    const event = standIn.event('payment_intent.succeeded', intent);
    const [notification] = parse(event);
    assert.equal(notification!.kind, 'authorisation');
    const authorisation = notification as Extract<ProcessorNotification, { kind: 'authorisation' }>;
    assert.equal(authorisation.id, JSON.parse(event.rawBody).id);
    assert.equal(authorisation.paymentId, req.paymentId);
    assert.equal(authorisation.outcome.kind, 'approved');
    assert.equal(authorisation.outcome.processorReference, intent.id);
  });

  test('payment_intent.amount_capturable_updated is an approval held for capture; its succeeded is the capture', async () => {
    const req = request(cards.succeeds, { capture: false });
    const intent = await intentOf(req);
    const [held] = parse(standIn.event('payment_intent.amount_capturable_updated', intent));
    assert.equal(held!.kind, 'authorisation');
    const outcome = (held as Extract<ProcessorNotification, { kind: 'authorisation' }>).outcome;
    assert.equal(outcome.kind === 'approved' && outcome.captured, false);
    const [capture] = parse(standIn.event('payment_intent.succeeded', { ...intent, status: 'succeeded' }));
    assert.deepEqual(
      { ...capture, id: '' },
      { kind: 'capture', id: '', paymentId: req.paymentId, processorReference: intent.id, success: true, reason: null },
    );
  });

  test('payment_intent.payment_failed is a declined authorisation with the reason mapped', async () => {
    const req = request(cards.insufficientFunds);
    const intent = await intentOf(req);
    const [notification] = parse(standIn.event('payment_intent.payment_failed', intent));
    const outcome = (notification as Extract<ProcessorNotification, { kind: 'authorisation' }>).outcome;
    assert.equal(outcome.kind, 'declined');
    assert.equal(outcome.kind === 'declined' && outcome.code, 'insufficient_funds');
    assert.equal(outcome.kind === 'declined' && outcome.processorReason, 'insufficient_funds');
  });

  test('payment_intent.canceled is a cancellation', async () => {
    const req = request(cards.succeeds, { capture: false });
    const intent = await intentOf(req);
    const [notification] = parse(standIn.event('payment_intent.canceled', { ...intent, status: 'canceled' }));
    assert.equal(notification!.kind, 'cancellation');
  });

  test('charge.refund.updated is the refund outcome by Tessera refund id; pending is not applied', async () => {
    const refund = {
      id: 're_abc',
      object: 'refund',
      status: 'failed',
      failure_reason: 'lost_or_stolen_card',
      metadata: { tessera_refund_id: 're_1' },
    };
    const [notification] = parse(standIn.event('charge.refund.updated', refund));
    assert.deepEqual(
      { ...notification, id: '' },
      { kind: 'refund', id: '', refundId: 're_1', processorReference: 're_abc', success: false, reason: 'card_closed' },
    );
    const [pending] = parse(standIn.event('charge.refund.updated', { ...refund, status: 'pending' }));
    assert.equal(pending!.kind, 'ignored');
    const charge = { id: 'ch_1', object: 'charge', refunds: { data: [{ ...refund, status: 'succeeded' }] } };
    const [refunded] = parse(standIn.event('charge.refunded', charge));
    assert.equal(refunded?.kind === 'refund' && refunded.success, true);
  });

  test('charge.dispute.created is a dispute step on the PaymentIntent', async () => {
    const dispute = {
      id: 'dp_1',
      object: 'dispute',
      amount: 1999,
      currency: 'usd',
      payment_intent: 'pi_1',
      reason: 'fraudulent',
      metadata: {},
    };
    const [notification] = parse(standIn.event('charge.dispute.created', dispute));
    assert.equal(notification!.kind, 'dispute');
    const found = notification as Extract<ProcessorNotification, { kind: 'dispute' }>;
    assert.deepEqual(
      [found.step, found.amount, found.currency, found.reasonCode, found.processorReference],
      ['charge.dispute.created', 1999n, 'USD', 'fraudulent', 'pi_1'],
    );
  });

  test('events Tessera has no use for, and PaymentIntents it did not create, are acknowledged and ignored', () => {
    const [other] = parse(standIn.event('customer.created', { id: 'cus_1', object: 'customer' }));
    assert.equal(other?.kind === 'ignored' && other.type, 'customer.created');
    const [foreign] = parse(
      standIn.event('payment_intent.succeeded', {
        id: 'pi_2',
        object: 'payment_intent',
        status: 'succeeded',
        metadata: {},
      }),
    );
    assert.equal(foreign!.kind, 'ignored');
  });

  test('a tampered body, an old timestamp, another secret or no signature is refused', () => {
    const object = { id: 'cus_1', object: 'customer' };
    const nowSeconds = Math.floor(clock.now().getTime() / 1000);
    const refused = [
      standIn.event('customer.created', object, { tamper: true }),
      standIn.event('customer.created', object, { timestampSeconds: nowSeconds - 301 }),
      standIn.event('customer.created', object, { secret: 'whsec_another' }),
      { headers: {}, rawBody: standIn.event('customer.created', object).rawBody },
    ];
    for (const event of refused) {
      assert.throws(() => stripe.parseNotification(event), NotificationRefused);
    }
    // Within the tolerance, by the injected clock.
    parse(standIn.event('customer.created', object, { timestampSeconds: nowSeconds - 299 }));
  });
});

describe('Stripe connector: set-up', () => {
  test('the stand-in refuses a parameter Stripe does not know, as Stripe does', async () => {
    const client = new Stripe(standIn.secretKey, {
      host: '127.0.0.1',
      port: new URL(standIn.url).port,
      protocol: 'http',
      maxNetworkRetries: 0,
    });
    const err = await rejection(
      client.paymentIntents.create({ amount: 1000, currency: 'usd', confirm: true, colour: 'red' } as any),
    );
    assert.ok(err instanceof Stripe.errors.StripeInvalidRequestError);
    assert.equal(err.code, 'parameter_unknown');
  });

  test('a base URL is an origin: a path, query or non-HTTP scheme is refused', () => {
    assert.deepEqual(parseStripeBaseUrl('https://api.stripe.com'), {
      host: 'api.stripe.com',
      port: 443,
      protocol: 'https',
    });
    assert.deepEqual(parseStripeBaseUrl('http://[::1]:8080/'), { host: '::1', port: 8080, protocol: 'http' });
    for (const bad of ['not a url', 'ftp://x', 'https://x/v1', 'https://x?a=1', 'https://u:p@x']) {
      assert.throws(() => parseStripeBaseUrl(bad), /baseUrl/);
    }
  });
});
