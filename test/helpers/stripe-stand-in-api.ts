/**
 * The part of Stripe's REST API the Stripe connector uses, as a stand-in keeps it for tests:
 * PaymentIntents (create with confirm, retrieve, capture, cancel) and refunds (create, retrieve),
 * in Stripe's object shapes, with Stripe's error shape, and the outcomes of Stripe's documented
 * test card numbers. Parameters Stripe does not know are refused as Stripe refuses them
 * (400 `parameter_unknown`), so that a test fails when the connector sends something Stripe would
 * not accept. test/helpers/stripe-stand-in.ts serves it over HTTP.
 */

import { randomBytes, randomInt } from 'node:crypto';
import {
  boolean,
  cancelShape,
  captureShape,
  checkCard,
  checkShape,
  createShape,
  integer,
  invalid,
  oneOf,
  refundShape,
  retrieveShape,
  StripeRefusal,
  type Params,
} from './stripe-stand-in-params.js';

/** Stripe's test cards and what the stand-in makes of them (anything else succeeds). */
export const stripeTestCards = {
  succeeds: '4242424242424242',
  genericDecline: '4000000000000002',
  insufficientFunds: '4000000000009995',
  lostCard: '4000000000009987',
  stolenCard: '4000000000009979',
  expired: '4000000000000069',
  incorrectCvc: '4000000000000127',
  processingError: '4000000000000119',
  fraudulent: '4100000000000019',
  /** 3-D Secure on every payment; an off-session payment is declined authentication_required. */
  threeDSecure: '4000002760003184',
  /** The stand-in's refunds of a payment with this card stay pending until settleRefund(). */
  refundPending: '4000000000005126',
} as const;

const cardDeclines = new Map<string, { code: string; decline_code?: string; message: string }>([
  [
    stripeTestCards.genericDecline,
    { code: 'card_declined', decline_code: 'generic_decline', message: 'Your card was declined.' },
  ],
  [
    stripeTestCards.insufficientFunds,
    { code: 'card_declined', decline_code: 'insufficient_funds', message: 'Your card has insufficient funds.' },
  ],
  [stripeTestCards.lostCard, { code: 'card_declined', decline_code: 'lost_card', message: 'Your card was declined.' }],
  [
    stripeTestCards.stolenCard,
    { code: 'card_declined', decline_code: 'stolen_card', message: 'Your card was declined.' },
  ],
  [stripeTestCards.expired, { code: 'expired_card', decline_code: 'expired_card', message: 'Your card has expired.' }],
  [
    stripeTestCards.incorrectCvc,
    { code: 'incorrect_cvc', decline_code: 'incorrect_cvc', message: "Your card's security code is incorrect." },
  ],
  [
    stripeTestCards.processingError,
    { code: 'processing_error', message: 'An error occurred while processing your card.' },
  ],
  [
    stripeTestCards.fraudulent,
    { code: 'card_declined', decline_code: 'fraudulent', message: 'Your card was declined.' },
  ],
]);

function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString('hex')}`;
}

type StripeObject = Record<string, any>;

/** The stand-in's state, and what it counts for the tests. */
export class StripeStandInApi {
  readonly intents = new Map<string, StripeObject>();
  readonly charges = new Map<string, StripeObject>();
  readonly refunds = new Map<string, StripeObject>();
  /** The card number of each PaymentIntent's attempt (never answered; decides refunds). */
  private readonly cardOf = new Map<string, string>();
  /** Tells the next confirmation to leave its PaymentIntent processing. */
  nextProcessing = 0;

  constructor(private readonly baseUrl: string) {}

  createPaymentIntent(params: Params): { status: number; body: StripeObject } {
    checkShape(params, createShape);
    const amount = integer(params, 'amount', true)!;
    if (amount < 50) throw invalid('amount_too_small', 'Amount must be at least 50 cents', 'amount');
    const currency = params.currency;
    if (typeof currency !== 'string' || !/^[a-z]{3}$/.test(currency)) {
      throw invalid('parameter_invalid_string', 'Invalid currency', 'currency');
    }
    const confirm = boolean(params.confirm, 'confirm') ?? false;
    const captureMethod =
      oneOf(params.capture_method, 'capture_method', ['automatic', 'automatic_async', 'manual']) ?? 'automatic_async';
    const futureUsage = oneOf(params.setup_future_usage, 'setup_future_usage', ['on_session', 'off_session']);
    const offSession = boolean(params.off_session, 'off_session') ?? false;
    const methodData = params.payment_method_data as Params | undefined;
    const cardOptions = (params.payment_method_options as Params | undefined)?.card as Params | undefined;
    const threeDSecure = oneOf(cardOptions?.request_three_d_secure, 'request_three_d_secure', [
      'any',
      'automatic',
      'challenge',
    ]);
    if (!confirm) throw invalid('parameter_invalid_empty', 'The connector always confirms at creation', 'confirm');
    if (methodData?.type !== 'card')
      throw invalid('parameter_missing', 'Missing payment_method_data[type]', 'payment_method_data[type]');
    const number = checkCard(methodData.card as Params | undefined);
    if (params.return_url !== undefined && !/^https?:\/\//.test(String(params.return_url))) {
      throw invalid('url_invalid', 'Not a valid URL', 'return_url');
    }

    const id = newId('pi');
    const intent: StripeObject = {
      id,
      object: 'payment_intent',
      amount,
      amount_capturable: 0,
      amount_received: 0,
      currency,
      capture_method: captureMethod,
      client_secret: `${id}_secret_${randomBytes(12).toString('hex')}`,
      confirmation_method: 'automatic',
      created: Math.floor(Date.now() / 1000),
      last_payment_error: null,
      latest_charge: null,
      livemode: false,
      metadata: (params.metadata as Params | undefined) ?? {},
      next_action: null,
      payment_method: newId('pm'),
      payment_method_types: ['card'],
      setup_future_usage: futureUsage,
      status: 'requires_payment_method',
      cancellation_reason: null,
    };
    this.intents.set(id, intent);
    this.cardOf.set(id, number);

    const decline = cardDeclines.get(number);
    if (decline !== undefined) return this.decline(intent, decline);
    // The 3-D Secure card always asks for it; any other card when the request asks (the stand-in's
    // test cards all support it).
    if (
      number === stripeTestCards.threeDSecure ||
      ((threeDSecure === 'any' || threeDSecure === 'challenge') && !offSession)
    ) {
      if (offSession) {
        return this.decline(intent, {
          code: 'authentication_required',
          decline_code: 'authentication_required',
          message: 'Your card was declined. This transaction requires authentication.',
        });
      }
      intent.status = 'requires_action';
      intent.next_action = {
        type: 'redirect_to_url',
        redirect_to_url: { url: `${this.baseUrl}/stand-in/3ds/${id}`, return_url: params.return_url ?? null },
      };
      return { status: 200, body: intent };
    }
    if (this.nextProcessing > 0) {
      this.nextProcessing -= 1;
      intent.status = 'processing';
      return { status: 200, body: intent };
    }
    this.authorize(intent);
    return { status: 200, body: intent };
  }

  /** The PaymentIntent, with latest_charge (and its balance transaction) expanded when asked. */
  view(intent: StripeObject, params: Params): StripeObject {
    const expand = (params.expand as string[] | undefined) ?? [];
    const charge = intent.latest_charge === null ? null : this.charges.get(intent.latest_charge);
    if (!expand.includes('latest_charge') && !expand.includes('latest_charge.balance_transaction'))
      return { ...intent };
    if (charge === null || charge === undefined) return { ...intent };
    const shown = { ...charge };
    if (!expand.includes('latest_charge.balance_transaction')) {
      shown.balance_transaction = charge.balance_transaction === null ? null : charge.balance_transaction.id;
    }
    return { ...intent, latest_charge: shown };
  }

  retrieve(id: string, params: Params): StripeObject {
    checkShape(params, retrieveShape);
    return this.view(this.intentOf(id), params);
  }

  /** The shopper's 3-D Secure step, passed or failed: the PaymentIntent moves on. */
  finishChallenge(id: string, passed: boolean): StripeObject {
    const intent = this.intentOf(id);
    if (intent.status !== 'requires_action') return intent;
    intent.next_action = null;
    if (passed) this.authorize(intent);
    else {
      intent.status = 'requires_payment_method';
      intent.last_payment_error = {
        type: 'invalid_request_error',
        code: 'payment_intent_authentication_failure',
        message: 'We are unable to authenticate your payment method.',
      };
    }
    return intent;
  }

  capture(id: string, params: Params): StripeObject {
    checkShape(params, captureShape);
    const intent = this.intentOf(id);
    if (intent.status !== 'requires_capture') {
      throw invalid(
        'payment_intent_unexpected_state',
        `This PaymentIntent could not be captured because it has a status of ${intent.status}.`,
        undefined,
        { payment_intent: intent },
      );
    }
    const amount = integer(params, 'amount_to_capture', false) ?? intent.amount_capturable;
    if (amount > intent.amount_capturable)
      throw invalid(
        'amount_too_large',
        'The amount to capture is greater than the amount capturable',
        'amount_to_capture',
      );
    const charge = this.charges.get(intent.latest_charge)!;
    charge.captured = true;
    charge.amount_captured = amount;
    charge.balance_transaction = this.balanceTransaction(amount, intent.currency);
    intent.amount_capturable = 0;
    intent.amount_received = amount;
    intent.status = 'succeeded';
    return this.view(intent, params);
  }

  cancel(id: string, params: Params): StripeObject {
    checkShape(params, cancelShape);
    const intent = this.intentOf(id);
    if (intent.status === 'succeeded' || intent.status === 'canceled') {
      throw invalid(
        'payment_intent_unexpected_state',
        `You cannot cancel this PaymentIntent because it has a status of ${intent.status}.`,
        undefined,
        { payment_intent: intent },
      );
    }
    intent.status = 'canceled';
    intent.amount_capturable = 0;
    intent.cancellation_reason = oneOf(params.cancellation_reason, 'cancellation_reason', [
      'duplicate',
      'fraudulent',
      'requested_by_customer',
      'abandoned',
    ]);
    return this.view(intent, params);
  }

  createRefund(params: Params): StripeObject {
    checkShape(params, refundShape);
    const intent = this.intentOf(String(params.payment_intent ?? ''), 'payment_intent');
    if (intent.status !== 'succeeded')
      throw invalid('charge_not_refundable', 'This PaymentIntent has no captured charge to refund.', 'payment_intent');
    const charge = this.charges.get(intent.latest_charge)!;
    const left = charge.amount_captured - charge.amount_refunded;
    const amount = integer(params, 'amount', false) ?? left;
    if (amount <= 0 || amount > left)
      throw invalid('amount_too_large', 'Refund amount is greater than unrefunded amount on charge', 'amount');
    charge.amount_refunded += amount;
    charge.refunded = charge.amount_refunded === charge.amount_captured;
    const refund: StripeObject = {
      id: newId('re'),
      object: 'refund',
      amount,
      currency: intent.currency,
      charge: charge.id,
      payment_intent: intent.id,
      created: Math.floor(Date.now() / 1000),
      metadata: (params.metadata as Params | undefined) ?? {},
      reason: params.reason ?? null,
      status: this.cardOf.get(intent.id) === stripeTestCards.refundPending ? 'pending' : 'succeeded',
      failure_reason: null,
      balance_transaction: null,
    };
    this.refunds.set(refund.id, refund);
    return refund;
  }

  retrieveRefund(id: string): StripeObject {
    const refund = this.refunds.get(id);
    if (refund === undefined)
      throw new StripeRefusal(404, {
        type: 'invalid_request_error',
        code: 'resource_missing',
        message: `No such refund: '${id}'`,
        param: 'id',
      });
    return refund;
  }

  private intentOf(id: string, param = 'intent'): StripeObject {
    const intent = this.intents.get(id);
    if (intent === undefined) {
      throw new StripeRefusal(404, {
        type: 'invalid_request_error',
        code: 'resource_missing',
        message: `No such payment_intent: '${id}'`,
        param,
      });
    }
    return intent;
  }

  private authorize(intent: StripeObject): void {
    const captured = intent.capture_method !== 'manual';
    const charge = this.newCharge(intent, { paid: true, captured, fraudulent: false });
    intent.latest_charge = charge.id;
    intent.status = captured ? 'succeeded' : 'requires_capture';
    intent.amount_capturable = captured ? 0 : intent.amount;
    intent.amount_received = captured ? intent.amount : 0;
  }

  private decline(intent: StripeObject, decline: { code: string; decline_code?: string; message: string }) {
    const fraudulent = decline.decline_code === 'fraudulent';
    const charge = this.newCharge(intent, { paid: false, captured: false, fraudulent });
    intent.latest_charge = charge.id;
    const error = { type: 'card_error', ...decline, charge: charge.id };
    intent.last_payment_error = error;
    intent.status = 'requires_payment_method';
    return { status: 402, body: { error: { ...error, payment_intent: { ...intent } } } };
  }

  private newCharge(
    intent: StripeObject,
    how: { paid: boolean; captured: boolean; fraudulent: boolean },
  ): StripeObject {
    const charge: StripeObject = {
      id: newId('ch'),
      object: 'charge',
      amount: intent.amount,
      amount_captured: how.captured ? intent.amount : 0,
      amount_refunded: 0,
      captured: how.captured,
      currency: intent.currency,
      paid: how.paid,
      payment_intent: intent.id,
      refunded: false,
      status: how.paid ? 'succeeded' : 'failed',
      balance_transaction: how.captured ? this.balanceTransaction(intent.amount, intent.currency) : null,
      outcome: how.fraudulent
        ? {
            network_status: 'not_sent_to_network',
            reason: 'highest_risk_level',
            risk_level: 'highest',
            risk_score: 95,
            type: 'blocked',
          }
        : {
            network_status: how.paid ? 'approved_by_network' : 'declined_by_network',
            reason: null,
            risk_level: 'normal',
            risk_score: 12,
            type: how.paid ? 'authorized' : 'issuer_declined',
          },
      payment_method_details: {
        type: 'card',
        card: {
          brand: 'visa',
          last4: this.cardOf.get(intent.id)?.slice(-4) ?? '0000',
          network_transaction_id: how.paid
            ? String(randomInt(100_000_000, 999_999_999)) + String(randomInt(100_000, 999_999))
            : null,
        },
      },
    };
    this.charges.set(charge.id, charge);
    return charge;
  }

  private balanceTransaction(amount: number, currency: string): StripeObject {
    // Stripe's standard card pricing: 2.9 % + 30 cents.
    return {
      id: newId('txn'),
      object: 'balance_transaction',
      amount,
      currency,
      fee: Math.round(amount * 0.029) + 30,
      net: amount - (Math.round(amount * 0.029) + 30),
    };
  }
}
