/**
 * The Stripe connector (docs/processors-stripe.md): PaymentIntents with the card's raw data,
 * confirmed at creation, through the official `stripe` package. Every call carries the
 * idempotency key the caller derived from the Tessera object and attempt, so that asking again
 * after an unknown outcome returns Stripe's first answer instead of charging again.
 */

import Stripe from 'stripe';
import { systemClock, type Clock } from '../../clock.js';
import type {
  AuthorizeOutcome,
  AuthorizeRequest,
  CancelRequest,
  CaptureOutcome,
  CaptureRequest,
  CompleteRedirectRequest,
  FollowUpOutcome,
  LiveProcessor,
  RefundOutcome,
  RefundRequest,
  RefundSettlement,
} from '../processor.js';
import { createStripeClient, stripeFailure, withoutCallSite } from './client.js';
import { createStripeDisputes } from './disputes.js';
import { parseStripeNotification } from './notifications.js';
import {
  authorizeOutcomeOf,
  declinedOutcome,
  declineMessages,
  refundOutcomeOf,
  refundSettlementOf,
  UnreadableAnswer,
} from './outcomes.js';

export interface StripeProcessorOptions {
  secretKey: string;
  webhookSecret: string;
  /** Stripe's public API unless given (a test stand-in); origin only, e.g. `http://127.0.0.1:4000`. */
  baseUrl?: string;
  timeoutMs: number;
  /** Judges a notification's age (300 s tolerance). */
  clock?: Clock;
}

/**
 * Parameters Stripe accepts only on accounts it enabled for them, so the client's types leave
 * them out: the card's raw data (`payment_method_data[card]`, "raw card data APIs") and the
 * stored credential's network reference for a merchant-initiated payment
 * (`payment_method_options[card][mit_exemption][network_transaction_id]`).
 */
type CreateParams = Omit<Stripe.PaymentIntentCreateParams, 'payment_method_data' | 'payment_method_options'> & {
  payment_method_data: {
    type: 'card';
    card: { number: string; exp_month: number; exp_year: number; cvc?: string };
    billing_details?: { name: string };
  };
  payment_method_options?: {
    card: { mit_exemption?: { network_transaction_id: string }; request_three_d_secure?: 'any' };
  };
};

/** Both, so that the network reference (the charge) and the fee (its balance transaction) come back. */
const expand = ['latest_charge', 'latest_charge.balance_transaction'];

export function createStripeProcessor(options: StripeProcessorOptions): LiveProcessor {
  const stripe = createStripeClient(options);
  const clock = options.clock ?? systemClock;
  const disputes = createStripeDisputes(stripe);

  return {
    name: 'stripe',
    statelessAuthorize: false,

    async authorize(request: AuthorizeRequest): Promise<AuthorizeOutcome> {
      const params = createParamsOf(request);
      let intent: Stripe.PaymentIntent;
      try {
        intent = await withoutCallSite(() =>
          stripe.paymentIntents.create(params as unknown as Stripe.PaymentIntentCreateParams, {
            idempotencyKey: request.idempotencyKey,
          }),
        );
      } catch (caught) {
        const decline = declineOf(caught);
        if (decline !== null) return decline;
        throw stripeFailure('authorize', caught);
      }
      return readable('authorize', () => authorizeOutcomeOf(intent));
    },

    async completeRedirect(request: CompleteRedirectRequest): Promise<AuthorizeOutcome> {
      // Stripe appends payment_intent to the return URL; the reference kept from the redirect
      // outcome is the one trusted, since the shopper's browser can change the query.
      const reference = request.processorReference;
      if (reference === null) throw new Error('A Stripe redirect always has its PaymentIntent as the reference');
      let intent: Stripe.PaymentIntent;
      try {
        intent = await withoutCallSite(() =>
          stripe.paymentIntents.retrieve(reference, { expand }, { idempotencyKey: request.idempotencyKey }),
        );
      } catch (caught) {
        throw stripeFailure('completeRedirect', caught);
      }
      return readable('completeRedirect', () => authorizeOutcomeOf(intent));
    },

    async resolveFollowUp(): Promise<FollowUpOutcome> {
      // Stripe's outcomes come by notification: the connector never announces a follow-up.
      throw new Error('The Stripe connector never answers with a follow-up');
    },

    async capture(request: CaptureRequest): Promise<CaptureOutcome> {
      let intent: Stripe.PaymentIntent;
      try {
        intent = await withoutCallSite(() =>
          stripe.paymentIntents.capture(
            request.paymentReference,
            { amount_to_capture: amountOf(request.amount) },
            { idempotencyKey: request.idempotencyKey },
          ),
        );
      } catch (caught) {
        // A card or request error is Stripe's definite "no" (e.g. the hold expired).
        if (
          caught instanceof Stripe.errors.StripeCardError ||
          caught instanceof Stripe.errors.StripeInvalidRequestError
        ) {
          return { kind: 'failed', code: 'processing_error', message: 'The capture was refused by the processor.' };
        }
        throw stripeFailure('capture', caught);
      }
      if (intent.status === 'succeeded') return { kind: 'captured' };
      if (intent.status === 'processing') return { kind: 'pending' };
      throw new Error(`Stripe capture failed: the PaymentIntent is in status ${String(intent.status)}`);
    },

    async cancel(request: CancelRequest): Promise<void> {
      try {
        await withoutCallSite(() =>
          stripe.paymentIntents.cancel(request.paymentReference, {}, { idempotencyKey: request.idempotencyKey }),
        );
      } catch (caught) {
        // Canceled already (by an earlier attempt whose answer was lost): the hold is released.
        if (caught instanceof Stripe.errors.StripeInvalidRequestError && caught.payment_intent?.status === 'canceled') {
          return;
        }
        throw stripeFailure('cancel', caught);
      }
    },

    async refund(request: RefundRequest): Promise<RefundOutcome> {
      let refund: Stripe.Refund;
      try {
        refund = await withoutCallSite(() =>
          stripe.refunds.create(
            {
              payment_intent: request.paymentReference,
              amount: amountOf(request.amount),
              metadata: { tessera_refund_id: request.refundId, tessera_payment_id: request.paymentId },
            },
            { idempotencyKey: request.idempotencyKey },
          ),
        );
      } catch (caught) {
        // Stripe refused the refund itself (more than is left, a disputed charge): it is final.
        if (
          caught instanceof Stripe.errors.StripeInvalidRequestError ||
          caught instanceof Stripe.errors.StripeCardError
        ) {
          return { kind: 'failed', processorReference: null, reason: 'processing_error' };
        }
        throw stripeFailure('refund', caught);
      }
      return readable('refund', () => refundOutcomeOf(refund));
    },

    async resolveRefund(refundReference: string): Promise<RefundSettlement> {
      let refund: Stripe.Refund;
      try {
        refund = await withoutCallSite(() => stripe.refunds.retrieve(refundReference));
      } catch (caught) {
        throw stripeFailure('resolveRefund', caught);
      }
      return readable('resolveRefund', () => refundSettlementOf(refund));
    },

    parseNotification(request) {
      return parseStripeNotification(stripe, options.webhookSecret, clock, request);
    },

    submitDisputeEvidence: (request) => disputes.submit(request),
    acceptDispute: (request) => disputes.accept(request),
  };
}

function createParamsOf(request: AuthorizeRequest): CreateParams {
  const { card } = request;
  const params: CreateParams = {
    amount: amountOf(request.amount),
    currency: request.currency.toLowerCase(),
    confirm: true,
    payment_method_data: {
      type: 'card',
      card: {
        number: card.number,
        exp_month: Number(card.expMonth),
        exp_year: Number(card.expYear),
        ...(card.securityCode === null ? {} : { cvc: card.securityCode }),
      },
      ...(card.holderName === null ? {} : { billing_details: { name: card.holderName } }),
    },
    metadata: {
      tessera_payment_id: request.paymentId,
      ...(request.orderNo === null ? {} : { order_no: request.orderNo }),
    },
    return_url: request.returnUrl,
    expand,
  };
  if (!request.capture) params.capture_method = 'manual';
  // Stripe stores the credential for later off-session payments and answers with the network's
  // reference, which CIT and MIT send back (docs/api.md, Stored cards).
  if (request.initiator === 'first_storing') params.setup_future_usage = 'off_session';
  // `use3D: true` (docs/api.md): 3-D Secure whenever the card supports it, not only when Stripe's
  // own rules ask for it. Never on MIT, where the cardholder is absent.
  if (request.threeDSecure === 'requested' && request.initiator !== 'mit') {
    params.payment_method_options = { card: { request_three_d_secure: 'any' } };
  }
  if (request.initiator === 'mit') {
    params.off_session = true;
    if (request.networkTransactionId !== null) {
      params.payment_method_options = {
        card: { mit_exemption: { network_transaction_id: request.networkTransactionId } },
      };
    }
  }
  return params;
}

/** Stripe takes amounts as JSON numbers; a bigint beyond a safe integer cannot be sent exactly. */
function amountOf(amount: bigint): number {
  if (amount < 0n || amount > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error('The amount cannot be sent to Stripe');
  return Number(amount);
}

/**
 * A card error is a decline (HTTP 402, `error.type` card_error); a request Stripe refused (an
 * amount below its minimum, a card number it cannot read) will not succeed on a replay either,
 * so it fails the payment too, as a processing_error with Stripe's code kept. Anything else
 * (no answer, a 5xx, a refused key) is not an outcome: null.
 */
function declineOf(caught: unknown): AuthorizeOutcome | null {
  if (caught instanceof Stripe.errors.StripeCardError) {
    const reference = caught.payment_intent?.id ?? caught.requestId ?? '';
    return declinedOutcome(reference, { code: caught.code || null, decline_code: caught.decline_code || null });
  }
  if (caught instanceof Stripe.errors.StripeInvalidRequestError) {
    return {
      kind: 'declined',
      processorReference: caught.payment_intent?.id ?? caught.requestId ?? '',
      code: 'processing_error',
      message: declineMessages.processing_error,
      risk: { riskScore: 0, riskMessage: 'risk_pass' },
      processorReason: caught.code || 'invalid_request_error',
    };
  }
  return null;
}

/** An answer Tessera cannot read leaves the outcome unknown: the caller keeps the payment processing. */
function readable<T>(operation: string, read: () => T): T {
  try {
    return read();
  } catch (caught) {
    if (caught instanceof UnreadableAnswer) {
      throw new Error(`Stripe ${operation} answer not understood: ${caught.message}`, { cause: caught });
    }
    throw stripeFailure(operation, caught);
  }
}
