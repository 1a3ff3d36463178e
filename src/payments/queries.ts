import type { RedirectAction } from '../processor/processor.js';
import { selectOwnRowById } from '../db/by-id.js';
import type { Queryable } from '../db/db.js';
import {
  countByStatus,
  listFilter,
  selectPage,
  type PageRequest,
  type CreatedRange,
  type StatusCounts,
} from '../db/pagination.js';
import type { ShippingOut } from '../core/common-schemas.js';
import type { Transition } from '../state-table.js';
import type { LineItemOut, PaymentMethodDetails, RecurringOut } from './payment-object.js';
import type { PaymentStatus } from './states.js';

/** The request fields that are only echoed back, kept together in payments.details. */
export interface PaymentDetails {
  description: string | null;
  ip: string | null;
  confirm: boolean;
  lineItems: LineItemOut[] | null;
  notifyUrl: string | null;
  receiptEmail: string | null;
  returnUrl: string | null;
  statementDescriptor: string | null;
  statementDescriptorSuffix: string | null;
  website: string | null;
  userAgent: string | null;
  shipping: ShippingOut | null;
  appScheme: string | null;
  openUserId: string | null;
  /** The merchant asked for 3-D Secure (the answered `use3D` says whether it was used). */
  use3DRequested: boolean;
  automaticPaymentMethods: { enabled: boolean } | null;
  recurring: RecurringOut | null;
  fromChannel: string | null;
  /** The orderNo came as a JSON number (docs/api.md#compatibility-with-existing-clients); absent in payments stored before. */
  orderNoIsNumber?: boolean;
  /** The card as the payment last used it (docs/api.md#compatibility-with-existing-clients), set with the method; absent without one. */
  paymentMethodDetails?: PaymentMethodDetails | null;
}

export interface PaymentRow {
  id: string;
  merchant_id: string;
  mode: string;
  customer_id: string | null;
  /** null while the payment is requires_payment_method (created without one). */
  payment_method_id: string | null;
  /** bigint columns arrive as text from both drivers, so money never passes through a float. */
  amount: string;
  currency: string;
  status: PaymentStatus;
  order_no: string | null;
  confirmation_method: 'automatic' | 'manual';
  pre_auth: 'n' | 'y';
  setup_future_usage: 'on' | 'off';
  subsequent_initial_type: 'cit' | 'mit' | null;
  details: PaymentDetails;
  amount_received: string;
  amount_capturable: string;
  /** docs/api.md#refunds: succeeded refunds, and refunds under way; together at most amount_received. */
  amount_refunded: string;
  amount_refund_pending: string;
  /** Held by chargebacks (docs/disputes.md, Money): not refundable while held. */
  amount_disputed: string;
  /** The payment's disputes (dp_ ids), oldest first. */
  dispute_ids: string[];
  risk_score: number | null;
  risk_message: string | null;
  error_code: string | null;
  error_message: string | null;
  use_3d: boolean;
  processor_reference: string | null;
  /** The processor account the payment went through; null for the built-in sandbox. */
  processor_account_id: string | null;
  /** The processor's own reason for a decline, as it gave it. */
  processor_reason: string | null;
  /** The fee a real processor reported for the payment (minor units), when it did; bigint as text. */
  processor_fee: string | null;
  /** A processor's 3-D Secure step while the shopper is away (RedirectAction), else null. */
  next_action: RedirectAction | null;
  network_transaction_id: string | null;
  three_d_secure: 'passed' | 'failed' | null;
  canceled_at: Date | null;
  cancellation_reason: string | null;
  invoice_id: string | null;
  /** The checkout session whose hosted page made the payment (docs/checkout.md), completed when it is paid. */
  checkout_session_id: string | null;
  created_at: Date;
  updated_at: Date;
}

/** The columns a new payment is written with; the refund and dispute columns start at their defaults. */
const insertColumns =
  'id, merchant_id, mode, customer_id, payment_method_id, amount, currency, status, order_no, confirmation_method, ' +
  'pre_auth, setup_future_usage, subsequent_initial_type, details, amount_received, amount_capturable, risk_score, ' +
  'risk_message, error_code, error_message, use_3d, processor_reference, processor_account_id, processor_reason, processor_fee, ' +
  'next_action, network_transaction_id, three_d_secure, ' +
  'canceled_at, cancellation_reason, invoice_id, checkout_session_id, created_at, updated_at';
/** Every column of a payment row (PaymentRow), in the order the row type names them. */
export const columns = `${insertColumns}, amount_refunded, amount_refund_pending, amount_disputed, dispute_ids`;

/**
 * Columns a change may write, with how each value is passed to the driver. The status is not
 * among them: only a Transition of the state table writes it (changePayment).
 */
const writable = {
  customer_id: (value: unknown) => value,
  payment_method_id: (value: unknown) => value,
  amount: (value: unknown) => value,
  currency: (value: unknown) => value,
  order_no: (value: unknown) => value,
  pre_auth: (value: unknown) => value,
  setup_future_usage: (value: unknown) => value,
  subsequent_initial_type: (value: unknown) => value,
  details: (value: unknown) => JSON.stringify(value),
  amount_received: (value: unknown) => value,
  amount_capturable: (value: unknown) => value,
  risk_score: (value: unknown) => value,
  risk_message: (value: unknown) => value,
  error_code: (value: unknown) => value,
  error_message: (value: unknown) => value,
  use_3d: (value: unknown) => value,
  processor_reference: (value: unknown) => value,
  processor_reason: (value: unknown) => value,
  processor_fee: (value: unknown) => value,
  next_action: (value: unknown) => JSON.stringify(value),
  network_transaction_id: (value: unknown) => value,
  network_token_encrypted: (value: unknown) => value,
  three_d_secure: (value: unknown) => value,
  canceled_at: (value: unknown) => value,
  cancellation_reason: (value: unknown) => value,
} as const;

export type PaymentChanges = Partial<Pick<PaymentRow, Exclude<keyof typeof writable, 'network_token_encrypted'>>> & {
  network_token_encrypted?: string | null;
};

/** A new payment; `networkTokenEncrypted` only for one created already waiting to settle. */
export async function insertPayment(
  db: Queryable,
  row: PaymentRow,
  networkTokenEncrypted: string | null = null,
): Promise<void> {
  await db.execute(
    `INSERT INTO payments (${insertColumns}, network_token_encrypted)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22,
       $23, $24, $25, $26, $27, $28, $29, $30, $31, $32, $33, $34, $35)`,
    [
      row.id,
      row.merchant_id,
      row.mode,
      row.customer_id,
      row.payment_method_id,
      row.amount,
      row.currency,
      row.status,
      row.order_no,
      row.confirmation_method,
      row.pre_auth,
      row.setup_future_usage,
      row.subsequent_initial_type,
      JSON.stringify(row.details),
      row.amount_received,
      row.amount_capturable,
      row.risk_score,
      row.risk_message,
      row.error_code,
      row.error_message,
      row.use_3d,
      row.processor_reference,
      row.processor_account_id,
      row.processor_reason,
      row.processor_fee,
      row.next_action === null ? null : JSON.stringify(row.next_action),
      row.network_transaction_id,
      row.three_d_secure,
      row.canceled_at,
      row.cancellation_reason,
      row.invoice_id,
      row.checkout_session_id,
      row.created_at,
      row.updated_at,
      networkTokenEncrypted,
    ],
  );
}

export async function selectPayment(
  db: Queryable,
  merchantId: string,
  mode: string,
  id: string,
): Promise<PaymentRow | undefined> {
  const [row] = await db.query<PaymentRow>(selectOwnRowById('payments', columns), [id, merchantId, mode]);
  return row;
}

/** For scheduled jobs and the hosted 3-D Secure page, which act on a payment id without a key. */
export async function selectPaymentById(db: Queryable, id: string): Promise<PaymentRow | undefined> {
  const [row] = await db.query<PaymentRow>(`SELECT ${columns} FROM payments WHERE id = $1`, [id]);
  return row;
}

export async function selectNetworkToken(db: Queryable, id: string): Promise<string | null> {
  const [row] = await db.query<{ network_token_encrypted: string | null }>(
    'SELECT network_token_encrypted FROM payments WHERE id = $1',
    [id],
  );
  return row?.network_token_encrypted ?? null;
}

/**
 * The one way a payment changes: only while its status is one of `move.from`, writing
 * `move.to` (paymentStates.transition in states.ts). Zero rows means another request or job
 * changed it first; the caller reloads and answers with the status it finds, and never
 * overwrites that change.
 */
export async function changePayment(
  db: Queryable,
  id: string,
  move: Transition<PaymentStatus>,
  changes: PaymentChanges,
  now: Date,
): Promise<PaymentRow | undefined> {
  const params: unknown[] = [id, [...move.from], now];
  const assignments = ['updated_at = $3'];
  const set = (column: string, value: unknown) => {
    params.push(value);
    assignments.push(`${column} = $${params.length}`);
  };
  if (move.to !== undefined) set('status', move.to);
  for (const [column, value] of Object.entries(changes)) {
    if (value === undefined) continue;
    const encode = writable[column as keyof typeof writable];
    // Column names come from the PaymentChanges type; this guards against a stray key at run time.
    if (!encode) throw new Error(`payments.${column} is not writable`);
    set(column, value === null ? null : encode(value));
  }
  const [row] = await db.query<PaymentRow>(
    `UPDATE payments SET ${assignments.join(', ')} WHERE id = $1 AND status = ANY($2::text[]) RETURNING ${columns}`,
    params,
  );
  return row;
}

/** The payment, locked until the caller's transaction ends (a reversal reads what refunds cover). */
export async function selectPaymentForUpdate(db: Queryable, id: string): Promise<PaymentRow | undefined> {
  const [row] = await db.query<PaymentRow>(`SELECT ${columns} FROM payments WHERE id = $1 FOR UPDATE`, [id]);
  return row;
}

/**
 * Payments claimed for an authorization (processing, no processor reference yet) and untouched
 * since `before`: their process died before it recorded the processor's answer.
 */
export async function selectInterruptedAuthorizations(
  db: Queryable,
  before: Date,
  limit: number,
  /** A processor forgets an idempotency key after a day (Stripe): older payments through one are not replayed. */
  replayableSince: Date,
): Promise<PaymentRow[]> {
  return db.query<PaymentRow>(
    `SELECT ${columns} FROM payments
     WHERE status = 'processing' AND processor_reference IS NULL AND updated_at < $1
       AND (processor_account_id IS NULL OR created_at > $3)
     ORDER BY updated_at LIMIT $2`,
    [before, limit, replayableSince],
  );
}

/**
 * Claims an interrupted authorization for one sweeper: only if nobody touched it since it was
 * read (its updated_at moves on, so a second sweeper's claim finds nothing).
 */
export async function reclaimInterruptedAuthorization(
  db: Queryable,
  row: PaymentRow,
  now: Date,
): Promise<PaymentRow | undefined> {
  const [claimed] = await db.query<PaymentRow>(
    `UPDATE payments SET updated_at = $3
     WHERE id = $1 AND status = 'processing' AND processor_reference IS NULL AND updated_at = $2
     RETURNING ${columns}`,
    [row.id, row.updated_at, now],
  );
  return claimed;
}

export interface PaymentFilters extends CreatedRange {
  customerId?: string;
  orderNo?: string;
  /** The dashboard's search (issue 11); not filters of the API's list. */
  ids?: readonly string[];
  statuses?: readonly string[];
  amountGte?: bigint;
  amountLte?: bigint;
  currency?: string;
  /** The e-mail of the payment's customer, or of its payment method's billing details (any case). */
  email?: string;
}

export async function selectPaymentPage(
  db: Queryable,
  merchantId: string,
  mode: string,
  filters: PaymentFilters,
  page: PageRequest,
) {
  const filter = listFilter(merchantId, mode)
    .add((p) => `customer_id = ${p}`, filters.customerId)
    .add((p) => `order_no = ${p}`, filters.orderNo)
    // One status is an equality, so that payments_status_list gives the order; several read the list.
    .add((p) => `status = ${p}`, filters.statuses?.length === 1 ? filters.statuses[0] : undefined)
    .add((p) => `status = ANY(${p})`, (filters.statuses?.length ?? 0) > 1 ? filters.statuses : undefined)
    .add((p) => `amount >= ${p}`, filters.amountGte?.toString())
    .add((p) => `amount <= ${p}`, filters.amountLte?.toString())
    .add((p) => `currency = ${p}`, filters.currency)
    // The dashboard's search names a few payments (by id, or those of one e-mail address's
    // customers and payment methods, which are the merchant's: the outer conditions check it).
    .narrow((p) => `id = ANY(${p})`, filters.ids)
    .narrow(
      (p) => `id = ANY(ARRAY(
        SELECT id FROM payments WHERE customer_id = ANY(ARRAY(
          SELECT id FROM customers WHERE merchant_id = $1 AND mode = $2 AND lower(email) = lower(${p})))
        UNION
        SELECT id FROM payments WHERE payment_method_id = ANY(ARRAY(SELECT id FROM payment_methods
          WHERE merchant_id = $1 AND mode = $2 AND lower(billing_details ->> 'email') = lower(${p})))))`,
      filters.email,
    )
    .created(filters);
  return selectPage<PaymentRow>(
    db,
    { table: filter.source('payments'), columns, where: filter.where, params: filter.params },
    page,
  );
}

/** Payments of each status, for the dashboard's status tabs (countByStatus, docs/decisions/0022). */
export function countPaymentsByStatus(
  db: Queryable,
  merchantId: string,
  mode: string,
  statuses: readonly string[],
  range: { createdGte?: Date; createdLte?: Date },
  cap: number,
): Promise<StatusCounts> {
  return countByStatus(db, 'payments', merchantId, mode, statuses, range, cap);
}
