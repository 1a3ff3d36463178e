/** Creating a payment: with confirm it is authorized in the same request (docs/api.md#states). */

import type { Queryable } from '../db/db.js';
import { isUniqueViolation } from '../db/errors.js';
import type { MerchantContext } from '../core/merchant-context.js';
import type { ReservedId } from '../core/reserved-id.js';
import { newId } from '../ids.js';
import { authorize } from './authorize.js';
import { sessionAlreadyPaying } from './checkout-hook.js';
import type { PaymentContext } from './context.js';
import {
  detailsOf,
  duplicateOrder,
  orderNoText,
  parseAmountField,
  parseCurrencyField,
  paymentMethodRequired,
} from './fields.js';
import * as queries from './queries.js';
import { applySeries } from './recurring.js';
import { checkRules, requireAllowedNotifyUrl, threeDSecureFor, withMethodDetails } from './rules.js';
import type { CreatePaymentBody } from './schemas.js';
import type { Payment } from './payment-object.js';
import type { PaymentStatus } from './states.js';

/**
 * With confirm the payment is created already claimed for its authorization; without a method it
 * waits for one (docs/api.md#states requires_payment_method).
 */
function startingStatus(confirm: boolean, paymentMethod: string | null): PaymentStatus {
  if (confirm) return 'processing';
  return paymentMethod === null ? 'requires_payment_method' : 'requires_confirmation';
}

/** The new payment's row as the request asks for it; `confirm` says whether it starts claimed. */
export function newPaymentRow(
  merchant: MerchantContext,
  input: CreatePaymentBody,
  confirm: boolean,
  now: Date,
  id: string = newId('pt'),
): queries.PaymentRow {
  const paymentMethod = input.paymentMethod ?? null;
  return {
    id,
    merchant_id: merchant.merchantId,
    mode: merchant.mode,
    customer_id: input.customerId ?? null,
    payment_method_id: paymentMethod,
    amount: parseAmountField(input.amount).toString(),
    currency: parseCurrencyField(input.currency),
    status: startingStatus(confirm, paymentMethod),
    order_no: orderNoText(input.orderNo) ?? null,
    confirmation_method: input.confirmationMethod ?? 'automatic',
    pre_auth: input.preAuth ?? 'n',
    setup_future_usage: input.setupFutureUsage ?? 'off',
    subsequent_initial_type: input.subsequentInitialType ?? null,
    details: detailsOf(input, null),
    amount_received: '0',
    amount_capturable: '0',
    amount_refunded: '0',
    amount_refund_pending: '0',
    amount_disputed: '0',
    dispute_ids: [],
    risk_score: null,
    risk_message: null,
    error_code: null,
    error_message: null,
    use_3d: false,
    processor_reference: null,
    processor_account_id: merchant.processorAccountId ?? null,
    processor_reason: null,
    processor_fee: null,
    next_action: null,
    network_transaction_id: null,
    three_d_secure: null,
    canceled_at: null,
    cancellation_reason: null,
    invoice_id: null,
    checkout_session_id: null,
    created_at: now,
    updated_at: now,
  };
}

/** Outside a transaction: a duplicate orderNo is refused at once. */
async function insertNew(source: Queryable, row: queries.PaymentRow): Promise<void> {
  try {
    await queries.insertPayment(source, row);
  } catch (err) {
    if (isUniqueViolation(err, 'payments_order_no')) throw duplicateOrder(row.order_no ?? '');
    if (isUniqueViolation(err, 'payments_checkout_session')) throw sessionAlreadyPaying();
    throw err;
  }
}

/**
 * `reserved` is the id an Idempotency-Key claim reserved (docs/decisions/0003): a retry after a
 * crash reuses it, so that a payment the first attempt created is answered, and one it was still
 * creating collides on the primary key instead of being created twice.
 */
export async function createPayment(
  ctx: PaymentContext,
  merchant: MerchantContext,
  input: CreatePaymentBody,
  reserved: ReservedId = { id: newId('pt'), earlier: false },
  checkoutSessionId: string | null = null,
): Promise<Payment> {
  const created = reserved.earlier ? await existingPayment(ctx, merchant, reserved.id) : null;
  if (created !== null) return created;
  try {
    return await createNew(ctx, merchant, input, reserved.id, checkoutSessionId);
  } catch (err) {
    const raced = isUniqueViolation(err, 'payments_pkey') ? await existingPayment(ctx, merchant, reserved.id) : null;
    if (raced === null) throw err;
    return raced;
  }
}

async function existingPayment(ctx: PaymentContext, merchant: MerchantContext, id: string): Promise<Payment | null> {
  const row = await queries.selectPayment(ctx.db, merchant.merchantId, merchant.mode, id);
  return row === undefined ? null : ctx.view.toPayment(row);
}

async function createNew(
  ctx: PaymentContext,
  merchant: MerchantContext,
  input: CreatePaymentBody,
  id: string,
  checkoutSessionId: string | null,
): Promise<Payment> {
  await requireAllowedNotifyUrl(ctx, input);
  const confirm = input.confirm === true || input.confirm === 'true';
  const requested = {
    ...newPaymentRow(merchant, input, confirm, ctx.clock.now(), id),
    checkout_session_id: checkoutSessionId,
  };
  // A later payment of a recurring series takes its customer and method from the series.
  const series = await applySeries(ctx.db, merchant, requested, {
    customerId: requested.customer_id,
    paymentMethod: requested.payment_method_id,
    setupFutureUsage: input.setupFutureUsage ?? null,
    subsequentInitialType: requested.subsequent_initial_type,
  });
  if (confirm && series.payment_method_id === null) throw paymentMethodRequired();
  const checked = { ...series, status: startingStatus(confirm, series.payment_method_id) };
  const method = await checkRules(ctx, ctx.db, merchant, checked);
  const row = withMethodDetails(checked, method);
  // Refuses a live payment while the merchant has no enabled live account, before anything is written.
  const processor = await ctx.processors.forNewAuthorization(row);
  if (confirm && method !== null && processor.statelessAuthorize) {
    return ctx.view.toPayment(await authorize(ctx, row, method, threeDSecureFor(row), 'new_row', processor));
  }
  await insertNew(ctx.db, row);
  if (!confirm || method === null) return ctx.view.toPayment(row);
  return ctx.view.toPayment(await authorize(ctx, row, method, threeDSecureFor(row), 'claimed_row', processor));
}
