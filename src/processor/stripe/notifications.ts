/**
 * Stripe's webhooks to Tessera (docs/processors-stripe.md, Notifications): one event per request,
 * signed in `Stripe-Signature` with the endpoint's signing secret, no older than 300 seconds.
 * Tessera selects payment_intent.*, charge.refunded, charge.refund.updated and charge.dispute.*;
 * anything else is acknowledged and ignored.
 */

import type Stripe from 'stripe';
import type { Clock } from '../../clock.js';
import { NotificationRefused, type NotificationBatch, type ProcessorNotification } from '../processor.js';
import { authorizeOutcomeOf, declinedOutcome, refundNotificationOf } from './outcomes.js';

/** Stripe's default, and the age beyond which a replayed request is refused. */
const toleranceSeconds = 300;

/**
 * Events whose object is one refund. Stripe's newer refund.* events tell the same change as
 * charge.refund.updated; an endpoint that selects both gets the outcome twice, under two event
 * ids, and the second changes nothing (a settled refund stays settled).
 */
const refundEvents: ReadonlySet<string> = new Set(['charge.refund.updated', 'refund.updated', 'refund.failed']);

const answer = { contentType: 'application/json', body: '{"received":true}' };

export function parseStripeNotification(
  stripe: Stripe,
  webhookSecret: string,
  clock: Clock,
  request: { headers: Record<string, string | undefined>; rawBody: string },
): NotificationBatch {
  const signature = request.headers['stripe-signature'];
  if (signature === undefined || signature === '')
    throw new NotificationRefused('The Stripe-Signature header is missing');
  let event: Stripe.Event;
  try {
    event = stripe.webhooks.constructEvent(
      request.rawBody,
      signature,
      webhookSecret,
      toleranceSeconds,
      undefined,
      clock.now().getTime(),
    );
  } catch {
    // The reason (a bad signature, an old timestamp) is not told to the sender.
    throw new NotificationRefused('The Stripe-Signature does not verify');
  }
  return { notifications: notificationsOf(event), answer };
}

function notificationsOf(event: Stripe.Event): ProcessorNotification[] {
  const id = event.id;
  const ignored: ProcessorNotification[] = [{ kind: 'ignored', id, type: String(event.type) }];
  const object = event.data?.object as unknown as Record<string, unknown> | undefined;
  if (object === null || typeof object !== 'object') return ignored;

  if (event.type.startsWith('payment_intent.')) {
    return paymentIntentNotification(id, event.type, object as unknown as Stripe.PaymentIntent) ?? ignored;
  }
  if (refundEvents.has(event.type)) {
    const refund = refundNotification(id, object as unknown as Stripe.Refund);
    return refund === null ? ignored : [refund];
  }
  if (event.type === 'charge.refunded') {
    // Each refund of the charge, when the event lists them; one event may settle several.
    const refunds = (object as unknown as Stripe.Charge).refunds?.data ?? [];
    const found = refunds
      .map((refund) => refundNotification(refunds.length === 1 ? id : `${id}.${refund.id}`, refund))
      .filter((notification) => notification !== null);
    return found.length === 0 ? ignored : found;
  }
  if (event.type.startsWith('charge.dispute.')) {
    const dispute = object as unknown as Stripe.Dispute;
    const paymentIntent = dispute.payment_intent;
    if (typeof dispute.amount !== 'number' || typeof dispute.currency !== 'string') return ignored;
    return [
      {
        kind: 'dispute',
        id,
        // A dispute carries no metadata of the payment: the caller finds the payment by its
        // processor reference, the PaymentIntent.
        paymentId: dispute.metadata?.tessera_payment_id ?? '',
        processorReference: typeof paymentIntent === 'string' ? paymentIntent : (paymentIntent?.id ?? ''),
        step: event.type,
        disputeReference: dispute.id,
        processorStatus: dispute.status ?? null,
        amount: BigInt(dispute.amount),
        currency: dispute.currency.toUpperCase(),
        reasonCode: dispute.reason ?? null,
      },
    ];
  }
  return ignored;
}

function paymentIntentNotification(
  id: string,
  type: string,
  intent: Stripe.PaymentIntent,
): ProcessorNotification[] | null {
  const paymentId = intent.metadata?.tessera_payment_id;
  // A PaymentIntent Tessera did not create (another integration on the same account).
  if (typeof paymentId !== 'string' || typeof intent.id !== 'string') return null;
  switch (type) {
    case 'payment_intent.amount_capturable_updated': {
      const outcome = authorizeOutcomeOf({ ...intent, status: 'requires_capture' });
      return outcome.kind === 'approved' ? [{ kind: 'authorisation', id, paymentId, outcome }] : null;
    }
    case 'payment_intent.succeeded': {
      // A held payment succeeds when it is captured: that is the capture's outcome.
      if (intent.capture_method === 'manual') {
        return [{ kind: 'capture', id, paymentId, processorReference: intent.id, success: true, reason: null }];
      }
      const outcome = authorizeOutcomeOf({ ...intent, status: 'succeeded' });
      return outcome.kind === 'approved' ? [{ kind: 'authorisation', id, paymentId, outcome }] : null;
    }
    case 'payment_intent.payment_failed': {
      const error = intent.last_payment_error ?? { code: 'payment_intent_payment_attempt_failed' };
      return [{ kind: 'authorisation', id, paymentId, outcome: declinedOutcome(intent.id, error) }];
    }
    case 'payment_intent.canceled':
      return [{ kind: 'cancellation', id, paymentId, processorReference: intent.id, success: true }];
    default:
      return null;
  }
}

function refundNotification(id: string, refund: Stripe.Refund): ProcessorNotification | null {
  const refundId = refund.metadata?.tessera_refund_id;
  if (typeof refundId !== 'string' || typeof refund.id !== 'string') return null;
  let settled: ReturnType<typeof refundNotificationOf>;
  try {
    settled = refundNotificationOf(refund);
  } catch {
    return null;
  }
  // Still pending: nothing to apply until Stripe tells the outcome.
  if (settled === null) return null;
  return { kind: 'refund', id, refundId, processorReference: refund.id, ...settled };
}
