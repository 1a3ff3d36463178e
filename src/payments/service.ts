/**
 * The payment service: the operations of src/payments/ composed over one set of dependencies.
 * Each concern is its own module: create.ts (creation), actions.ts (update, confirm, capture,
 * cancel), authorize.ts (the processor's answer recorded), jobs.ts (follow-ups and the sweep),
 * three-d-secure.ts (the hosted page), rules.ts (docs/api.md#recurring-series), recurring.ts (docs/api.md#recurring-series series),
 * state-changes.ts (transactions and conditional updates through the state table of states.ts),
 * view.ts (the Payment object).
 */

import type { Page } from '../core/page.js';
import type { MerchantContext } from '../core/merchant-context.js';
import type { ReservedId } from '../core/reserved-id.js';
import { createdBounds } from '../core/common-schemas.js';
import { cancelPayment, capturePayment, confirmPayment, updatePayment } from './actions.js';
import type { PaymentContext, PaymentServiceDeps } from './context.js';
import { createPayment } from './create.js';
import {
  abandonInvoicePayment,
  createInvoicePayment,
  paymentStatusOf,
  type InvoiceClaim,
  type InvoicePaymentRequest,
} from './invoice-payments.js';
import { registerPaymentJobs, resumeInterruptedAuthorizations } from './jobs.js';
import * as queries from './queries.js';
import type { CancelPaymentBody, ConfirmPaymentBody, CreatePaymentBody, UpdatePaymentBody } from './schemas.js';
import type { Payment } from './payment-object.js';
import { refundLedger } from './refunds.js';
import type { ListPaymentsQuery } from './params-schemas.js';
import { dailySummary } from './daily-summary.js';
import { paymentStatuses } from './states.js';
import { loadPayment } from './state-changes.js';
import { challengePage, completeChallenge, completeProcessorRedirect } from './three-d-secure.js';
import { applyAuthorizationNotice, applyCaptureNotice } from './processor-answers.js';
import { createPaymentView } from './view.js';

export type { PaymentServiceDeps } from './context.js';
export type { PaymentForRefund, RefundLedger } from './refunds.js';
export { refundableAmount } from './refunds.js';
export { initiatorOf } from './rules.js';
export type { InvoiceClaim, InvoicePaymentRequest } from './invoice-payments.js';
export type { InvoicePaymentEnd, InvoicePaymentListener } from './invoice-hook.js';
export {
  expiredCancellationReason,
  interruptedAuthorizationAfterMs,
  jobKinds,
  preAuthorizationLifetimeMs,
} from './job-kinds.js';

/** The dashboard's search of payments (issue 11), on top of the API's list filters. */
export type PaymentSearch = Pick<
  queries.PaymentFilters,
  'ids' | 'statuses' | 'amountGte' | 'amountLte' | 'currency' | 'email'
>;

async function listPayments(
  ctx: PaymentContext,
  merchant: MerchantContext,
  query: ListPaymentsQuery,
  search: PaymentSearch = {},
): Promise<Page<Payment>> {
  const { rows, hasMore } = await queries.selectPaymentPage(
    ctx.db,
    merchant.merchantId,
    merchant.mode,
    {
      customerId: query.customerId,
      orderNo: query.orderNo,
      ...createdBounds(query),
      ...search,
    },
    query,
  );
  return { data: rows.map(ctx.view.toPayment), hasMore };
}

export function createPaymentService(deps: PaymentServiceDeps) {
  const ctx: PaymentContext = { ...deps, view: createPaymentView(deps) };
  registerPaymentJobs(ctx);
  return {
    resumeInterruptedAuthorizations: () => resumeInterruptedAuthorizations(ctx),
    create: (merchant: MerchantContext, input: CreatePaymentBody, reserved?: ReservedId) =>
      createPayment(ctx, merchant, input, reserved),
    retrieve: async (merchant: MerchantContext, id: string): Promise<Payment> =>
      ctx.view.toPayment(await loadPayment(ctx.db, merchant, id)),
    list: (merchant: MerchantContext, query: ListPaymentsQuery, search?: PaymentSearch) =>
      listPayments(ctx, merchant, query, search),
    /** The dashboard's status tabs: payments of each status (and all), each count stopped at `cap`. */
    countByStatus: (merchant: MerchantContext, range: { createdGte?: Date; createdLte?: Date }, cap: number) =>
      queries.countPaymentsByStatus(ctx.db, merchant.merchantId, merchant.mode, paymentStatuses, range, cap),
    /** Count, successes and volume of each of the last `days` UTC days (the dashboard's home). */
    dailySummary: (merchant: MerchantContext, days: number) => dailySummary(ctx.db, ctx.clock, merchant, days),
    update: (merchant: MerchantContext, id: string, changes: UpdatePaymentBody) =>
      updatePayment(ctx, merchant, id, changes),
    confirm: (merchant: MerchantContext, id: string, input: ConfirmPaymentBody) =>
      confirmPayment(ctx, merchant, id, input),
    capture: (merchant: MerchantContext, id: string) => capturePayment(ctx, merchant, id),
    cancel: (merchant: MerchantContext, id: string, input: CancelPaymentBody) =>
      cancelPayment(ctx, merchant, id, input),
    /** For a public key's calls (docs/api.md#base-url-and-authentication): whether `given` is the payment's client secret. */
    clientSecretMatches: (paymentId: string, given: string) => ctx.view.secretMatches(paymentId, given),
    challengePage: (paymentId: string, secret: string) => challengePage(ctx, paymentId, secret),
    completeChallenge: (paymentId: string, secret: string, result: 'pass' | 'fail') =>
      completeChallenge(ctx, paymentId, secret, result),
    /** The shopper's return from a processor's 3-D Secure page. */
    completeProcessorRedirect: (paymentId: string, secret: string, params: Record<string, string>) =>
      completeProcessorRedirect(ctx, paymentId, secret, params),
    /** A processor's notifications (docs/processors.md, Notifications), applied once. */
    applyAuthorizationNotice: (
      ...args: Parameters<typeof applyAuthorizationNotice> extends [unknown, ...infer R] ? R : never
    ) => applyAuthorizationNotice(ctx, ...args),
    applyCaptureNotice: (...args: Parameters<typeof applyCaptureNotice> extends [unknown, ...infer R] ? R : never) =>
      applyCaptureNotice(ctx, ...args),
    /** The refund columns of payments, for the refunds domain (docs/api.md#refunds). */
    refundLedger,
    // For src/invoices/ (invoice-payments.ts).
    createForInvoice: (merchant: MerchantContext, request: InvoicePaymentRequest, claim: InvoiceClaim) =>
      createInvoicePayment(ctx, merchant, request, claim),
    statusOf: (paymentId: string) => paymentStatusOf(ctx, paymentId),
    /** For src/checkout/ (hosted-payment.ts): a payment that completes its session when it goes through. */
    createForCheckout: (merchant: MerchantContext, input: CreatePaymentBody, checkoutSessionId: string) =>
      createPayment(ctx, merchant, input, undefined, checkoutSessionId),
    abandonInvoicePayment: (paymentId: string) => abandonInvoicePayment(ctx, paymentId),
  };
}

export type PaymentService = ReturnType<typeof createPaymentService>;
