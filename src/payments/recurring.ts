/**
 * Recurring series (docs/api.md#recurring-series) as existing clients send them in `recurring`:
 * `{initial: true}` is the storing payment that starts a series (as setupFutureUsage=on);
 * `{initial: false, relationPaymentId}` is a merchant-initiated follow-up on the customer and
 * payment method of an earlier succeeded payment of the same merchant and mode. A series only
 * fills and checks the payment's own columns; every rule of rules.ts applies after it, so a
 * follow-up needs the mit capability and a bound pair like any MIT payment.
 */

import type { Queryable } from '../db/db.js';
import type { MerchantContext } from '../core/merchant-context.js';
import { invalidField } from '../core/errors.js';
import * as queries from './queries.js';
import type { RecurringOut } from './payment-object.js';

export type SeriesRole = 'none' | 'initial' | 'follow_up';

/** A relation without `initial` is a follow-up too; `{}` (or no `recurring`) is no series. */
export function seriesRoleOf(recurring: RecurringOut | null): SeriesRole {
  if (recurring === null) return 'none';
  if (recurring.initial === true) return 'initial';
  if (recurring.initial === false || recurring.relationPaymentId !== null) return 'follow_up';
  return 'none';
}

export function sameSeries(a: RecurringOut | null, b: RecurringOut | null): boolean {
  return a?.initial === b?.initial && a?.relationPaymentId === b?.relationPaymentId;
}

/**
 * What the request (with, on an update or a confirmation, what the payment already holds) says
 * about the fields a series sets: a series refuses a value that contradicts it, naming the field.
 */
export interface SeriesClaims {
  customerId: string | null;
  paymentMethod: string | null;
  /** Only as sent in this request: absent is not `off`. */
  setupFutureUsage: 'on' | 'off' | null;
  subsequentInitialType: 'cit' | 'mit' | null;
}

const relationParam = 'recurring.relationPaymentId';

/** The payment's row with what its series implies, or a 400 naming the field that contradicts it. */
export async function applySeries(
  source: Queryable,
  merchant: MerchantContext,
  row: queries.PaymentRow,
  claims: SeriesClaims,
): Promise<queries.PaymentRow> {
  const recurring = row.details.recurring;
  switch (seriesRoleOf(recurring)) {
    case 'none':
      return row;
    case 'initial':
      return startSeries(row, recurring!, claims);
    case 'follow_up':
      return followSeries(source, merchant, row, recurring!, claims);
  }
}

function startSeries(row: queries.PaymentRow, recurring: RecurringOut, claims: SeriesClaims): queries.PaymentRow {
  if (recurring.relationPaymentId !== null) {
    throw invalidField(
      relationParam,
      'recurring.relationPaymentId must be absent when recurring.initial is true: the first payment of a series relates to none',
      'series',
    );
  }
  if (claims.setupFutureUsage === 'off') {
    throw invalidField(
      'setupFutureUsage',
      'setupFutureUsage cannot be off with recurring.initial true: the first payment of a series stores the card',
      'series',
    );
  }
  if (claims.subsequentInitialType !== null) {
    throw invalidField(
      'subsequentInitialType',
      'subsequentInitialType must be absent with recurring.initial true: the first payment of a series stores the card',
      'series',
    );
  }
  return { ...row, setup_future_usage: 'on', subsequent_initial_type: null };
}

async function followSeries(
  source: Queryable,
  merchant: MerchantContext,
  row: queries.PaymentRow,
  recurring: RecurringOut,
  claims: SeriesClaims,
): Promise<queries.PaymentRow> {
  const relationId = recurring.relationPaymentId;
  if (relationId === null) {
    throw invalidField(
      relationParam,
      'recurring.relationPaymentId is required when recurring.initial is false: the id of an earlier succeeded payment of the series',
      'required',
    );
  }
  if (claims.subsequentInitialType === 'cit') {
    throw invalidField(
      'subsequentInitialType',
      'subsequentInitialType must be mit or absent with recurring.initial false: a later payment of a series is merchant-initiated',
      'series',
    );
  }
  const relation = await relationOf(source, merchant, relationId);
  return {
    ...row,
    customer_id: agree('customerId', claims.customerId, relation.customerId, relationId),
    payment_method_id: agree('paymentMethod', claims.paymentMethod, relation.paymentMethod, relationId),
    subsequent_initial_type: 'mit',
  };
}

/**
 * The earlier payment a follow-up relates to. Another merchant's payment reads as unknown, so
 * that the answer says nothing about payments the caller does not own.
 */
async function relationOf(
  source: Queryable,
  merchant: MerchantContext,
  id: string,
): Promise<{ customerId: string; paymentMethod: string }> {
  const relation = await queries.selectPayment(source, merchant.merchantId, merchant.mode, id);
  if (!relation) {
    throw invalidField(
      relationParam,
      `recurring.relationPaymentId names no payment of this merchant: '${id}'`,
      'exists',
    );
  }
  if (relation.status !== 'succeeded') {
    throw invalidField(
      relationParam,
      `recurring.relationPaymentId must name a succeeded payment; '${id}' is ${relation.status}`,
      'succeeded',
    );
  }
  if (relation.customer_id === null || relation.payment_method_id === null) {
    throw invalidField(
      relationParam,
      `recurring.relationPaymentId must name a payment with a customer; '${id}' has none (a series starts with recurring.initial true)`,
      'customer',
    );
  }
  return { customerId: relation.customer_id, paymentMethod: relation.payment_method_id };
}

/** A follow-up may omit its customer and method (taken from the relation) but not change them. */
function agree(field: 'customerId' | 'paymentMethod', claimed: string | null, series: string, relationId: string) {
  if (claimed !== null && claimed !== series) {
    throw invalidField(
      field,
      `${field} must be omitted or equal '${series}', the ${field} of '${relationId}' (recurring.relationPaymentId)`,
      'series',
    );
  }
  return series;
}
