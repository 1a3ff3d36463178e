/** Request fields as the payment stores them: parsed, normalized, or refused naming the field. */

import { normalizeShipping } from '../core/common-schemas.js';
import { DomainError, invalidField } from '../core/errors.js';
import { normalizeCurrency, parseAmount } from '../money.js';
import type { PaymentDetails } from './queries.js';
import type { CreatePaymentBody } from './schemas.js';
import type { LineItemOut, RecurringOut } from './payment-object.js';

export const paymentMethodRequired = () =>
  invalidField('paymentMethod', 'paymentMethod is required to confirm a payment', 'required');

export const duplicateOrder = (orderNo: string) =>
  new DomainError(
    'duplicate_order',
    `orderNo '${orderNo}' is already used by a payment that has not failed or been canceled`,
    { param: 'orderNo' },
  );

export function parseAmountField(value: string | number): bigint {
  const amount = parseAmount(value);
  if (amount === undefined) {
    throw invalidField(
      'amount',
      'amount must be a string of digits (minor units) or a whole number, at most 12 digits',
    );
  }
  return amount;
}

export function parseCurrencyField(code: string, param = 'currency'): string {
  const currency = normalizeCurrency(code);
  if (currency === undefined) throw invalidField(param, `${param} must be an ISO 4217 currency code`, 'currency');
  return currency;
}

/** docs/api.md#compatibility-with-existing-clients: an orderNo sent as a number is kept as its text (duplicate_order compares text). */
export function orderNoText(orderNo: string | number | undefined): string | undefined {
  return orderNo === undefined ? undefined : String(orderNo);
}

type LineItemIn = NonNullable<CreatePaymentBody['lineItems']>[number];

export function normalizeLineItems(items: LineItemIn[] | undefined): LineItemOut[] | null {
  if (items === undefined) return null;
  return items.map((item, index) => ({
    amount: item.amount ?? null,
    currency: item.currency === undefined ? null : parseCurrencyField(item.currency, `lineItems[${index}].currency`),
    description: item.description ?? null,
    images: item.images ?? null,
    name: item.name ?? null,
    quantity: item.quantity ?? null,
  }));
}

/** As stored and echoed; `""` for relationPaymentId means absent (existing clients send it). */
function recurringOf(recurring: NonNullable<CreatePaymentBody['recurring']>): RecurringOut {
  return { initial: recurring.initial ?? null, relationPaymentId: recurring.relationPaymentId || null };
}

/** Request fields that are echoed (and `recurring`, see recurring.ts), as stored in payments.details. */
export function detailsOf(input: Partial<CreatePaymentBody>, base: PaymentDetails | null): PaymentDetails {
  const keep = <T>(value: T | undefined, current: T | null | undefined): T | null =>
    value !== undefined ? value : (current ?? null);
  return {
    description: keep(input.description, base?.description),
    ip: keep(input.ip, base?.ip),
    confirm: base?.confirm ?? (input.confirm === true || input.confirm === 'true'),
    lineItems: input.lineItems !== undefined ? normalizeLineItems(input.lineItems) : (base?.lineItems ?? null),
    notifyUrl: keep(input.notifyUrl, base?.notifyUrl),
    receiptEmail: keep(input.receiptEmail, base?.receiptEmail),
    returnUrl: keep(input.returnUrl, base?.returnUrl),
    statementDescriptor: keep(input.statementDescriptor, base?.statementDescriptor),
    statementDescriptorSuffix: keep(input.statementDescriptorSuffix, base?.statementDescriptorSuffix),
    website: keep(input.website, base?.website),
    userAgent: keep(input.userAgent, base?.userAgent),
    shipping: input.shipping !== undefined ? normalizeShipping(input.shipping) : (base?.shipping ?? null),
    appScheme: keep(input.appScheme, base?.appScheme),
    openUserId: keep(input.openUserId, base?.openUserId),
    use3DRequested: input.use3D ?? base?.use3DRequested ?? false,
    automaticPaymentMethods: keep(input.automaticPaymentMethods, base?.automaticPaymentMethods),
    recurring: input.recurring !== undefined ? recurringOf(input.recurring) : (base?.recurring ?? null),
    fromChannel: keep(input.fromChannel, base?.fromChannel),
    // The orderNo is answered exactly as sent: as a number when it came as one.
    orderNoIsNumber: input.orderNo !== undefined ? typeof input.orderNo === 'number' : (base?.orderNoIsNumber ?? false),
    // Set from the payment method by withMethodDetails (rules.ts) whenever the rules load it.
    paymentMethodDetails: base?.paymentMethodDetails ?? null,
  };
}
