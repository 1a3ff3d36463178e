/**
 * Stripe's objects read as Tessera's outcomes (docs/processors-stripe.md, Declines): a
 * PaymentIntent's status as an authorization outcome, a card error's codes as a decline code, a
 * refund's status as a refund outcome. Pure functions over the objects Stripe answers with.
 */

import type Stripe from 'stripe';
import type {
  AuthorizeOutcome,
  DeclineCode,
  RefundFailureReason,
  RefundOutcome,
  RefundSettlement,
  RiskInfo,
} from '../processor.js';

/** Sentences for the merchant and the cardholder; none of them may carry card data. */
export const declineMessages: Record<DeclineCode, string> = {
  card_declined: 'The card was declined.',
  insufficient_funds: 'The card has insufficient funds.',
  expired_card: 'The card has expired.',
  incorrect_cvc: "The card's security code is incorrect.",
  risk_rejected: 'The payment was refused by risk screening.',
  authentication_failed: 'The cardholder did not pass 3-D Secure authentication.',
  processing_error: 'The payment could not be processed.',
};

/**
 * Stripe's `decline_code` (the issuer's reason) or `code` (Stripe's error code) → Tessera's
 * decline code; anything not listed is a plain card_declined (docs/processors-stripe.md, Declines).
 */
const declineByStripeCode: ReadonlyMap<string, DeclineCode> = new Map<string, DeclineCode>([
  ['insufficient_funds', 'insufficient_funds'],
  ['expired_card', 'expired_card'],
  ['incorrect_cvc', 'incorrect_cvc'],
  ['invalid_cvc', 'incorrect_cvc'],
  ['fraudulent', 'risk_rejected'],
  ['stolen_card', 'risk_rejected'],
  ['lost_card', 'risk_rejected'],
  ['merchant_blacklist', 'risk_rejected'],
  ['authentication_required', 'authentication_failed'],
  ['payment_intent_authentication_failure', 'authentication_failed'],
  ['processing_error', 'processing_error'],
]);

/** What Stripe said about a failed attempt: a card error, or a PaymentIntent's last_payment_error. */
export interface StripeDeclineDetail {
  code?: string | null;
  decline_code?: string | null;
}

export function declineCodeOf(detail: StripeDeclineDetail): DeclineCode {
  // The issuer's reason is the more precise one (code card_declined, decline_code insufficient_funds).
  for (const stripeCode of [detail.decline_code, detail.code]) {
    const mapped = stripeCode ? declineByStripeCode.get(stripeCode) : undefined;
    if (mapped !== undefined) return mapped;
  }
  return 'card_declined';
}

const passingRisk: RiskInfo = { riskScore: 0, riskMessage: 'risk_pass' };
const rejectedRisk: RiskInfo = { riskScore: 100, riskMessage: 'risk_rejected' };

/** Radar's assessment of the charge, when Stripe made one; a pass when it did not say. */
function riskOf(charge: Stripe.Charge | null): RiskInfo {
  const outcome = charge?.outcome;
  if (!outcome) return passingRisk;
  const score = typeof outcome.risk_score === 'number' ? outcome.risk_score : 0;
  if (outcome.risk_level === 'highest' || outcome.type === 'blocked')
    return { riskScore: Math.max(score, 100), riskMessage: 'risk_rejected' };
  return { riskScore: score, riskMessage: 'risk_pass' };
}

/** The PaymentIntent's latest charge, when it was expanded (`expand[]=latest_charge`). */
export function chargeOf(intent: Stripe.PaymentIntent): Stripe.Charge | null {
  const charge = intent.latest_charge;
  return charge !== null && typeof charge === 'object' ? charge : null;
}

/** The fee Stripe took, when the charge's balance transaction was expanded (captured charges only). */
function feeOf(charge: Stripe.Charge | null): bigint | null {
  const transaction = charge?.balance_transaction;
  if (transaction === null || transaction === undefined || typeof transaction !== 'object') return null;
  return typeof transaction.fee === 'number' ? BigInt(transaction.fee) : null;
}

export function declinedOutcome(
  processorReference: string,
  detail: StripeDeclineDetail,
  risk?: RiskInfo,
): Extract<AuthorizeOutcome, { kind: 'declined' }> {
  const code = declineCodeOf(detail);
  return {
    kind: 'declined',
    processorReference,
    code,
    message: declineMessages[code],
    risk: risk ?? (code === 'risk_rejected' ? rejectedRisk : passingRisk),
    // The client gives a card error without an issuer's reason decline_code '' (hence ||).
    processorReason: detail.decline_code || detail.code || null,
  };
}

/** Thrown when Stripe answered with an object Tessera cannot read as an outcome. */
export class UnreadableAnswer extends Error {}

/**
 * A PaymentIntent after confirmation (created with confirm=true, or retrieved after the
 * shopper's 3-D Secure step) as the authorization's outcome.
 */
export function authorizeOutcomeOf(intent: Stripe.PaymentIntent): AuthorizeOutcome {
  if (typeof intent?.id !== 'string') throw new UnreadableAnswer('The PaymentIntent has no id');
  const charge = chargeOf(intent);
  const risk = riskOf(charge);
  switch (intent.status) {
    case 'succeeded':
    case 'requires_capture':
      return {
        kind: 'approved',
        processorReference: intent.id,
        // Stripe reports the network's reference on the charge's card details (Visa and
        // Mastercard give one; others may not), which CIT and MIT later send back.
        networkTransactionId: charge?.payment_method_details?.card?.network_transaction_id ?? '',
        networkToken: null,
        risk,
        captured: intent.status === 'succeeded',
        followUp: null,
        processorFee: feeOf(charge),
      };
    case 'requires_action': {
      const url = intent.next_action?.redirect_to_url?.url;
      if (typeof url !== 'string')
        throw new UnreadableAnswer(`The PaymentIntent requires an action other than a redirect`);
      return { kind: 'redirect', processorReference: intent.id, action: { url, method: 'GET', data: {} }, risk };
    }
    case 'processing':
      return { kind: 'pending', processorReference: intent.id, risk };
    case 'requires_payment_method': {
      // The attempt failed (after a 3-D Secure step the shopper did not pass, or the issuer
      // declined after it): last_payment_error says why.
      // Without a recorded error, the shopper left the 3-D Secure step without passing it.
      const detail: StripeDeclineDetail = intent.last_payment_error ?? {
        code: 'payment_intent_authentication_failure',
      };
      return declinedOutcome(intent.id, detail, risk);
    }
    case 'canceled':
      return declinedOutcome(intent.id, { code: intent.cancellation_reason ?? 'canceled' }, risk);
    default:
      throw new UnreadableAnswer(`The PaymentIntent is in status ${String(intent.status)}`);
  }
}

function refundFailureOf(refund: Stripe.Refund): RefundFailureReason {
  switch (refund.failure_reason) {
    case 'expired_or_canceled_card':
    case 'lost_or_stolen_card':
      return 'card_closed';
    case 'declined':
      return 'declined';
    default:
      return 'processing_error';
  }
}

export function refundOutcomeOf(refund: Stripe.Refund): RefundOutcome {
  if (typeof refund?.id !== 'string') throw new UnreadableAnswer('The refund has no id');
  switch (refund.status) {
    case 'succeeded':
      return { kind: 'succeeded', processorReference: refund.id };
    case 'pending':
    case 'requires_action':
      // Stripe tells the outcome by a charge.refund.updated notification.
      return { kind: 'accepted', processorReference: refund.id, followUp: null };
    case 'failed':
    case 'canceled':
      return { kind: 'failed', processorReference: refund.id, reason: refundFailureOf(refund) };
    default:
      throw new UnreadableAnswer(`The refund is in status ${String(refund.status)}`);
  }
}

export function refundSettlementOf(refund: Stripe.Refund): RefundSettlement {
  const outcome = refundOutcomeOf(refund);
  if (outcome.kind === 'succeeded') return { kind: 'succeeded' };
  if (outcome.kind === 'accepted') return { kind: 'pending' };
  return { kind: 'failed', reason: outcome.reason };
}

/** A refund's failure as a notification's reason (null when it succeeded or is still pending). */
export function refundNotificationOf(
  refund: Stripe.Refund,
): { success: boolean; reason: RefundFailureReason | null } | null {
  const outcome = refundOutcomeOf(refund);
  if (outcome.kind === 'succeeded') return { success: true, reason: null };
  if (outcome.kind === 'failed') return { success: false, reason: outcome.reason };
  return null;
}
