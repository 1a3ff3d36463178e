import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Stripe from 'stripe';
import type { AuthorizeOutcome, LiveProcessor } from '../src/processor/processor.js';
import { parseStripeBaseUrl } from '../src/processor/stripe/client.js';
import {
  approved,
  declined,
  processorFor,
  rejection,
  request,
  sent,
  shown,
} from './helpers/stripe-connector-requests.js';
import { startStripeStandIn, stripeTestCards as cards, type StripeStandIn } from './helpers/stripe-stand-in.js';

let standIn: StripeStandIn;
let stripe: LiveProcessor;

describe('Stripe connector', () => {
  before(async () => {
    standIn = await startStripeStandIn();
    stripe = processorFor(standIn, 5000);
  });
  after(() => standIn.close());

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
      const params = sent(standIn, req.idempotencyKey);
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
      const params = sent(standIn, req.idempotencyKey);
      assert.equal(params.setup_future_usage, 'off_session');
      assert.deepEqual(params.payment_method_data.billing_details, { name: 'Ada Lovelace' });
      assert.equal(params.off_session, undefined);
    });

    test('a CIT is an on-session payment: no off_session, no MIT exemption', async () => {
      const req = request(cards.succeeds, { initiator: 'cit', networkTransactionId: '123456789012345' });
      approved(await stripe.authorize(req));
      const params = sent(standIn, req.idempotencyKey);
      assert.equal(params.off_session, undefined);
      assert.equal(params.payment_method_options, undefined);
      assert.equal(params.setup_future_usage, undefined);
    });

    test('an MIT is off-session with the stored credential network reference, and without a security code', async () => {
      const req = request(cards.succeeds, { initiator: 'mit', networkTransactionId: '123456789012345' });
      req.card.securityCode = null;
      approved(await stripe.authorize(req));
      const params = sent(standIn, req.idempotencyKey);
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
      assert.equal(sent(standIn, req.idempotencyKey).capture_method, 'manual');
      const capture = {
        paymentId: req.paymentId,
        paymentReference: outcome.processorReference,
        amount: 1500n,
        currency: 'USD',
        idempotencyKey: `${req.paymentId}.capture`,
      };
      assert.deepEqual(await stripe.capture(capture), { kind: 'captured' });
      assert.deepEqual(
        await stripe.capture(capture),
        { kind: 'captured' },
        'the same capture again is the first answer',
      );
      assert.equal(standIn.count('captures', capture.idempotencyKey), 1);
      assert.equal(sent(standIn, capture.idempotencyKey).amount_to_capture, '1500');
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
      // Tessera's own return URL, its query kept, with Stripe's parameters added.
      assert.equal(`${back.origin}${back.pathname}`, req.returnUrl.split('?')[0]);
      assert.equal(back.searchParams.get('secret'), 'pt_secret');
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

    test('use3D asks Stripe for 3-D Secure with any card; an MIT never does', async () => {
      const req = request(cards.succeeds, { threeDSecure: 'requested' });
      assert.equal((await stripe.authorize(req)).kind, 'redirect');
      assert.deepEqual(sent(standIn, req.idempotencyKey).payment_method_options, {
        card: { request_three_d_secure: 'any' },
      });
      const mit = request(cards.succeeds, { threeDSecure: 'requested', initiator: 'mit', networkTransactionId: '1' });
      approved(await stripe.authorize(mit));
      assert.equal(sent(standIn, mit.idempotencyKey).payment_method_options.card.request_three_d_secure, undefined);
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
      const params = sent(standIn, refund.idempotencyKey);
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
});
