/** docs/api.md#tokenization-rules: the rules a payment must meet before it may be authorized, and how its card is used. */

import type { Queryable } from '../db/db.js';
import type { MerchantContext } from '../core/merchant-context.js';
import { DomainError, invalidField } from '../core/errors.js';
import type { PaymentMethodForPayment } from '../payment-methods/service.js';
import type { PaymentInitiator, ThreeDSecureState } from '../processor/processor.js';
import type { PaymentContext } from './context.js';
import type { PaymentRow } from './queries.js';

/** What a payment's own columns say about how its card is used (docs/api.md#tokenization-rules). */
export type Usage = Pick<
  PaymentRow,
  'amount' | 'customer_id' | 'payment_method_id' | 'setup_future_usage' | 'subsequent_initial_type' | 'details'
>;

export function initiatorOf(payment: Pick<Usage, 'setup_future_usage' | 'subsequent_initial_type'>): PaymentInitiator {
  if (payment.subsequent_initial_type !== null) return payment.subsequent_initial_type;
  return payment.setup_future_usage === 'on' ? 'first_storing' : 'one_off';
}

/** The method of a payment past requires_payment_method, which always has one. */
export function methodIdOf(row: Pick<PaymentRow, 'id' | 'payment_method_id'>): string {
  if (row.payment_method_id === null) throw new Error(`Payment ${row.id} has no payment method`);
  return row.payment_method_id;
}

/**
 * docs/api.md#compatibility-with-existing-clients: the payment keeps the card as the rules loaded it, answered as
 * `paymentMethodDetails` (a snapshot, as Stripe's charge keeps it): a later change of the
 * payment method's expiry does not rewrite what an earlier payment was made with.
 */
export function withMethodDetails<T extends Pick<PaymentRow, 'details'>>(
  row: T,
  method: PaymentMethodForPayment | null,
): T {
  const { card } = method ?? {};
  const paymentMethodDetails = card
    ? {
        type: 'card' as const,
        card: {
          brand: card.brand,
          last4: card.last4,
          expMonth: card.expMonth,
          expYear: card.expYear,
          country: card.country,
          fingerprint: card.fingerprint,
        },
      }
    : null;
  return { ...row, details: { ...row.details, paymentMethodDetails } };
}

export function threeDSecureFor(row: PaymentRow): ThreeDSecureState {
  if (row.three_d_secure !== null) return row.three_d_secure;
  return row.details.use3DRequested && initiatorOf(row) !== 'mit' ? 'requested' : 'not_requested';
}

export async function requireAllowedNotifyUrl(
  ctx: Pick<PaymentContext, 'checkNotifyUrl'>,
  input: { notifyUrl?: string | null },
): Promise<void> {
  if (typeof input.notifyUrl === 'string') await ctx.checkNotifyUrl?.(input.notifyUrl);
}

/**
 * The payment method's own state against the payment (docs/api.md#tokenization-rules): detached methods are
 * finished; a method belongs to at most one customer; CIT and MIT need the pair bound by an
 * earlier storing payment.
 */
export function checkMethod(usage: Usage, method: PaymentMethodForPayment): void {
  if (method.detachedAt !== null) {
    throw new DomainError('invalid_state', 'The payment method is detached and can no longer be used for payments', {
      param: 'paymentMethod',
      state: 'detached',
    });
  }
  if (method.customerId !== null && method.customerId !== usage.customer_id) {
    throw new DomainError(
      'payment_method_bound_elsewhere',
      usage.customer_id === null
        ? 'The payment method belongs to a customer; send that customerId with it'
        : 'The payment method is bound to another customer; create a new payment method for this customer',
      { param: 'paymentMethod' },
    );
  }
  const initiator = initiatorOf(usage);
  if ((initiator === 'cit' || initiator === 'mit') && method.storedAt === null) {
    throw new DomainError(
      'payment_method_not_bound',
      `A ${initiator.toUpperCase()} payment needs a customerId and paymentMethod bound by an earlier successful storing payment (setupFutureUsage=on)`,
      { param: 'paymentMethod' },
    );
  }
}

/** The merchant's capabilities and the fields that go with a storing or MIT payment. */
function checkUsage(merchant: MerchantContext, usage: Usage): void {
  const initiator = initiatorOf(usage);
  const storing = usage.setup_future_usage === 'on' || usage.subsequent_initial_type !== null;
  if (storing && !merchant.tokenizationEnabled) {
    const field = usage.subsequent_initial_type !== null ? 'subsequentInitialType' : 'setupFutureUsage';
    throw new DomainError(
      'tokenization_not_enabled',
      'Tokenization is not enabled for this merchant; ask your account manager to enable it',
      { param: field },
    );
  }
  if (initiator === 'mit' && !merchant.mitEnabled) {
    throw new DomainError(
      'mit_not_enabled',
      'Merchant-initiated payments are not enabled for this merchant; ask your account manager to enable them',
      { param: 'subsequentInitialType' },
    );
  }
  if (initiator === 'mit' && usage.details.use3DRequested) {
    throw invalidField('use3D', 'use3D cannot be true on a MIT payment: the cardholder is absent', 'mit');
  }
  if (storing && usage.customer_id === null) {
    throw invalidField(
      'customerId',
      usage.subsequent_initial_type !== null
        ? 'customerId is required with subsequentInitialType'
        : 'customerId is required when setupFutureUsage is on',
      'required',
    );
  }
  // docs/api.md#tokenization-rules: a zero-amount authorization only verifies and stores the card.
  if (BigInt(usage.amount) === 0n && initiator !== 'first_storing') {
    throw invalidField(
      'amount',
      'amount may be 0 only on a storing payment (setupFutureUsage=on without subsequentInitialType)',
      'zero_amount',
    );
  }
}

/**
 * Every rule a payment must meet before it may be authorized, checked when it is created,
 * updated and confirmed. Returns the payment method with its card, for the processor, or null
 * for a payment that has none yet (requires_payment_method).
 */
export async function checkRules(
  ctx: Pick<PaymentContext, 'paymentMethods'>,
  source: Queryable,
  merchant: MerchantContext,
  usage: Usage,
): Promise<PaymentMethodForPayment | null> {
  checkUsage(merchant, usage);
  if (usage.payment_method_id === null) {
    // No method to check yet; the customer is checked now all the same.
    if (usage.customer_id !== null) await ctx.paymentMethods.requireCustomer(source, merchant, usage.customer_id);
    return null;
  }
  // One statement reads the method and checks the customer.
  const method = await ctx.paymentMethods.loadForPayment(source, merchant, usage.payment_method_id, usage.customer_id);
  checkMethod(usage, method);
  return method;
}
