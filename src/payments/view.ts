import { createHmac, timingSafeEqual } from 'node:crypto';
import { isoTimestamp } from '../time.js';
import type { Vault } from '../vault/vault.js';
import type { PaymentRow } from './queries.js';
import type { Payment, PaymentEventObject } from './payment-object.js';
import { displayStatusOf } from './states.js';

/** How a payment is shown: to the merchant's API, in webhook bodies, and to the hosted page. */
export interface PaymentView {
  toPayment(row: PaymentRow): Payment;
  /** docs/api.md#payments: a payment in a webhook body also carries actionStatus. */
  toEventObject(row: PaymentRow): PaymentEventObject;
  clientSecretOf(paymentId: string): string;
  /** Where a processor's own 3-D Secure page sends the shopper back (docs/processors.md, 3-D Secure). */
  processorReturnUrl(paymentId: string): string;
  /** Compares in constant time, so the secret cannot be guessed byte by byte. */
  secretMatches(paymentId: string, given: string): boolean;
}

export function createPaymentView({ vault, publicUrl }: { vault: Vault; publicUrl: () => string }): PaymentView {
  const clientSecretKey = vault.deriveKey('client-secret');

  /** Derived, never stored: the same payment always has the same secret, and only this service can make it. */
  function clientSecretOf(paymentId: string): string {
    return `${paymentId}_secret_${createHmac('sha256', clientSecretKey).update(paymentId).digest('hex')}`;
  }

  function secretMatches(paymentId: string, given: string): boolean {
    const expected = Buffer.from(clientSecretOf(paymentId));
    const candidate = Buffer.from(given);
    return candidate.length === expected.length && timingSafeEqual(candidate, expected);
  }

  function challengeUrl(paymentId: string): string {
    return `${publicUrl()}/3ds/${paymentId}?secret=${encodeURIComponent(clientSecretOf(paymentId))}`;
  }

  function processorReturnUrl(paymentId: string): string {
    return `${publicUrl()}/3ds/${paymentId}/return?secret=${encodeURIComponent(clientSecretOf(paymentId))}`;
  }

  function toPayment(row: PaymentRow): Payment {
    const details = row.details;
    return {
      id: row.id,
      amount: BigInt(row.amount).toString(),
      currency: row.currency,
      confirmationMethod: row.confirmation_method,
      customerId: row.customer_id,
      paymentMethod: row.payment_method_id,
      description: details.description,
      ip: details.ip,
      confirm: details.confirm ? 'true' : 'false',
      lineItems: details.lineItems,
      notifyUrl: details.notifyUrl,
      orderNo: row.order_no !== null && details.orderNoIsNumber ? Number(row.order_no) : row.order_no,
      preAuth: row.pre_auth,
      receiptEmail: details.receiptEmail,
      returnUrl: details.returnUrl,
      setupFutureUsage: row.setup_future_usage,
      subsequentInitialType: row.subsequent_initial_type,
      statementDescriptor: details.statementDescriptor,
      statementDescriptorSuffix: details.statementDescriptorSuffix,
      website: details.website,
      userAgent: details.userAgent,
      shipping: details.shipping,
      appScheme: details.appScheme,
      openUserId: details.openUserId,
      fromChannel: details.fromChannel,
      automaticPaymentMethods: details.automaticPaymentMethods,
      recurring: details.recurring,
      paymentMethodTypes: ['card'],
      paymentMethodType: 'card',
      paymentMethodDetails: row.payment_method_id === null ? null : (details.paymentMethodDetails ?? null),
      clientSecret: clientSecretOf(row.id),
      canceledAt: row.canceled_at === null ? null : isoTimestamp(row.canceled_at),
      cancellationReason: row.cancellation_reason,
      amountReceived: BigInt(row.amount_received).toString(),
      amountCapturable: BigInt(row.amount_capturable).toString(),
      amountRefunded: BigInt(row.amount_refunded).toString(),
      created: isoTimestamp(row.created_at),
      riskInfo: row.risk_score === null ? null : { riskScore: row.risk_score, riskMessage: row.risk_message ?? '' },
      status: row.status,
      displayStatus: displayStatusOf(row.status, {
        received: BigInt(row.amount_received),
        refunded: BigInt(row.amount_refunded),
        pending: BigInt(row.amount_refund_pending),
        disputed: row.dispute_ids.length > 0,
      }),
      disputes: row.dispute_ids,
      amountDisputed: BigInt(row.amount_disputed).toString(),
      errorCode: row.error_code,
      errorMessage: row.error_message,
      processorReason: row.processor_reason,
      invoiceId: row.invoice_id,
      use3D: row.use_3d,
      // docs/api.md#compatibility-with-existing-clients: left out, not null, when there is no action.
      ...(row.status === 'requires_action'
        ? { nextAction: { type: 'redirect', redirectToUrl: challengeUrl(row.id) } }
        : {}),
    };
  }

  return {
    toPayment,
    toEventObject: (row) => ({ ...toPayment(row), actionStatus: null }),
    clientSecretOf,
    processorReturnUrl,
    secretMatches,
  };
}
