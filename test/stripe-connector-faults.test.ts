import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LiveProcessor } from '../src/processor/processor.js';
import { approved, processorFor, rejection, request } from './helpers/stripe-connector-requests.js';
import { startStripeStandIn, stripeTestCards as cards, type StripeStandIn } from './helpers/stripe-stand-in.js';

let standIn: StripeStandIn;
let stripe: LiveProcessor;

describe('Stripe connector faults', () => {
  before(async () => {
    standIn = await startStripeStandIn();
    stripe = processorFor(standIn, 5000);
  });
  after(() => standIn.close());

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
      const impatient = processorFor(standIn, 1000);
      const req = request(cards.succeeds);
      standIn.hangNext(1);
      const err = await rejection(impatient.authorize(req));
      assert.match(err.message, /timed out/);
      assert.equal(standIn.count('confirmations', req.idempotencyKey), 1, 'Stripe did charge');
      const replay = approved(await stripe.authorize(req));
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
});
