import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  NotificationRefused,
  type AuthorizeRequest,
  type LiveProcessor,
  type ProcessorNotification,
} from '../src/processor/processor.js';
import { startReceiver } from './helpers/receiver.js';
import { clock, processorFor, request } from './helpers/stripe-connector-requests.js';
import { startStripeStandIn, stripeTestCards as cards, type StripeStandIn } from './helpers/stripe-stand-in.js';

let standIn: StripeStandIn;
let stripe: LiveProcessor;

describe('Stripe notifications', () => {
  before(async () => {
    standIn = await startStripeStandIn();
    stripe = processorFor(standIn, 5000);
  });
  after(() => standIn.close());

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
        {
          kind: 'capture',
          id: '',
          paymentId: req.paymentId,
          processorReference: intent.id,
          success: true,
          reason: null,
        },
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
        {
          kind: 'refund',
          id: '',
          refundId: 're_1',
          processorReference: 're_abc',
          success: false,
          reason: 'card_closed',
        },
      );
      const [failed] = parse(standIn.event('refund.failed', refund));
      assert.equal(failed?.kind === 'refund' && failed.reason, 'card_closed');
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

    test('an event the stand-in posts arrives as signed, and verifies as received', async () => {
      const receiver = await startReceiver();
      try {
        const event = standIn.event('customer.created', { id: 'cus_2', object: 'customer' });
        const answer = await standIn.postEvent(receiver.url('/processor_webhooks/pa_1'), event);
        assert.equal(answer.status, 200);
        const [received] = await receiver.waitFor(1);
        const headers = { 'stripe-signature': String(received!.headers['stripe-signature']) };
        const [notification] = parse({ headers, rawBody: received!.body });
        assert.equal(notification!.id, JSON.parse(event.rawBody).id);
      } finally {
        await receiver.close();
      }
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
});
