import type { Clock } from '../clock.js';
import type { Db, Queryable } from '../db/db.js';
import type { CustomerService } from '../customers/service.js';
import type { MerchantContext } from '../core/merchant-context.js';
import type { Page } from '../core/page.js';
import { DomainError, invalidField, notFound } from '../core/errors.js';
import { normalizeShipping } from '../core/common-schemas.js';
import { newId } from '../ids.js';
import type { JobRunner } from '../jobs/runner.js';
import type { CheckoutPayment } from '../payments/checkout-hook.js';
import type { PaymentService } from '../payments/service.js';
import { normalizeBillingDetails } from '../payment-methods/service.js';
import { normalizeLineItems, parseCurrencyField } from '../payments/fields.js';
import { parseAmount } from '../money.js';
import { isoTimestamp } from '../time.js';
import * as queries from './queries.js';
import type { CheckoutSession, CreateCheckoutSessionBody, ListCheckoutSessionsQuery } from './schemas.js';
import { checkoutStates } from './states.js';

export const expireJobKind = 'checkout_session.expire';

const minuteMs = 60 * 1000;
/** docs/checkout.md: 24 hours unless the session asks for less (Stripe's bounds: 30 minutes to 24 hours). */
export const defaultLifetimeMs = 24 * 60 * minuteMs;
const shortestLifetimeMs = 30 * minuteMs;

export interface CheckoutDeps {
  db: Db;
  clock: Clock;
  jobs: JobRunner;
  customers: Pick<CustomerService, 'require'>;
  /** For a hosted-page payment left awaiting 3-D Secure (hosted-payment.ts). */
  payments: Pick<PaymentService, 'statusOf' | 'cancel'>;
  /** Refuses a notifyUrl that webhooks may not be sent to, as a payment's (docs/webhooks.md#what-is-sent). */
  checkNotifyUrl?: (url: string) => Promise<void>;
  publicUrl: () => string;
}

/** The hosted page of a session (docs/checkout.md): its id is unguessable (63 random bits). */
export function checkoutPageUrl(deps: Pick<CheckoutDeps, 'publicUrl'>, id: string): string {
  return `${deps.publicUrl()}/checkout/${id}`;
}

export function toCheckoutSession(deps: Pick<CheckoutDeps, 'publicUrl'>, row: queries.CheckoutSessionRow) {
  const { details } = row;
  const session: CheckoutSession = {
    id: row.id,
    url: checkoutPageUrl(deps, row.id),
    status: row.status,
    amountTotal: row.amount_total,
    currency: row.currency,
    orderNo: details.orderNo,
    customer: row.customer_id,
    customerEmail: details.customerEmail,
    billingDetails: details.billingDetails,
    lineItems: details.lineItems,
    shipping: details.shipping,
    paymentMethodTypes: ['card'],
    preAuth: details.preAuth,
    setupFutureUsage: details.setupFutureUsage,
    statementDescriptor: details.statementDescriptor,
    website: details.website,
    returnUrl: details.returnUrl,
    cancelUrl: details.cancelUrl,
    notifyUrl: details.notifyUrl,
    locale: details.locale ?? 'auto',
    paymentId: row.payment_id,
    expiresAt: isoTimestamp(row.expires_at),
    created: isoTimestamp(row.created_at),
  };
  return session;
}

/**
 * A session that stores the card must be payable as a storing payment (docs/api.md#tokenization-rules): refused now,
 * as POST /payment/create would refuse it, rather than on the shopper's page.
 */
function checkStoring(merchant: MerchantContext, input: CreateCheckoutSessionBody): void {
  if (input.setupFutureUsage !== 'on') return;
  if (!merchant.tokenizationEnabled) {
    throw new DomainError(
      'tokenization_not_enabled',
      'Tokenization is not enabled for this merchant; ask your account manager to enable it',
      { param: 'setupFutureUsage' },
    );
  }
  if (input.customer === undefined) {
    throw invalidField('customer', 'customer is required when setupFutureUsage is on', 'required');
  }
}

/** docs/checkout.md: card is the only method the hosted page offers; any other is refused by name. */
function checkPaymentMethodTypes(types: string[] | undefined): void {
  const other = (types ?? []).find((type) => type.toLowerCase() !== 'card');
  if (other !== undefined) {
    throw invalidField(
      'paymentMethodTypes',
      `paymentMethodTypes: '${other.slice(0, 32)}' is not offered; card is the only payment method type`,
      'enum',
    );
  }
}

function amountOf(input: CreateCheckoutSessionBody): bigint {
  const amount = parseAmount(input.amountTotal);
  if (amount === undefined) {
    throw invalidField('amountTotal', 'amountTotal must be a string of digits (minor units), at most 12 digits');
  }
  // As a payment's amount (docs/api.md#requests): "0" only when the card is stored for later.
  if (amount === 0n && input.setupFutureUsage !== 'on') {
    throw invalidField('amountTotal', 'amountTotal must be more than 0 unless setupFutureUsage is on', 'minimum');
  }
  return amount;
}

function expiryOf(input: CreateCheckoutSessionBody, now: Date): Date {
  if (input.expiresAt === undefined) return new Date(now.getTime() + defaultLifetimeMs);
  const at = typeof input.expiresAt === 'number' ? new Date(input.expiresAt * 1000) : new Date(input.expiresAt);
  const lifetime = at.getTime() - now.getTime();
  if (!(lifetime >= shortestLifetimeMs && lifetime <= defaultLifetimeMs)) {
    throw invalidField('expiresAt', 'expiresAt must be from 30 minutes to 24 hours from now', 'range');
  }
  return at;
}

async function detailsOf(deps: CheckoutDeps, input: CreateCheckoutSessionBody): Promise<queries.CheckoutDetails> {
  if (input.notifyUrl !== undefined) await deps.checkNotifyUrl?.(input.notifyUrl);
  return {
    orderNo: input.orderNo ?? null,
    customerEmail: input.customerEmail ?? null,
    billingDetails: input.billingDetails === undefined ? null : normalizeBillingDetails(input.billingDetails),
    lineItems: normalizeLineItems(input.lineItems),
    shipping: normalizeShipping(input.shipping),
    preAuth: input.preAuth ?? 'n',
    setupFutureUsage: input.setupFutureUsage ?? 'off',
    statementDescriptor: input.statementDescriptor ?? null,
    website: input.website ?? null,
    returnUrl: input.returnUrl,
    cancelUrl: input.cancelUrl ?? null,
    notifyUrl: input.notifyUrl ?? null,
    locale: input.locale && input.locale !== 'auto' ? input.locale : null,
  };
}

export function createCheckoutService(deps: CheckoutDeps) {
  const { db, clock, jobs } = deps;
  const expire = checkoutStates.transition('expire', 'expired');
  const complete = checkoutStates.transition('complete', 'complete');

  /**
   * Before a session expires, a hosted-page payment still awaiting 3-D Secure (the shopper left)
   * is canceled, so that no payment can complete an expired session. One that went through
   * meanwhile has completed the session already (paymentPaid), and the cancel fails.
   */
  async function cancelPending(row: queries.CheckoutSessionRow): Promise<void> {
    if (row.status !== 'open' || !row.pending_payment_id) return;
    if ((await deps.payments.statusOf(row.pending_payment_id)) !== 'requires_action') return;
    const owner = { merchantId: row.merchant_id, mode: row.mode as MerchantContext['mode'] };
    const merchant: MerchantContext = { ...owner, keyKind: 'private', tokenizationEnabled: false, mitEnabled: false };
    await deps.payments.cancel(merchant, row.pending_payment_id, { cancellationReason: 'abandoned' }).catch(() => {});
  }

  // The expiry job re-checks the time: a session paid or expired by hand meanwhile is left as it is.
  jobs.register(expireJobKind, async (id) => {
    const row = await queries.selectSessionById(db, id);
    if (!row || row.status !== 'open' || row.expires_at > clock.now()) return;
    // A form post in flight (its payment with the processor) is let finish: its payment completes
    // the session or fails. The expiry runs again when the post's hold ends.
    const attemptUntil = row.attempt_until;
    if (!row.pending_payment_id && attemptUntil && attemptUntil > clock.now()) {
      await db.transaction((tx) => jobs.schedule(tx, expireJobKind, id, attemptUntil));
      return;
    }
    await cancelPending(row);
    await queries.expireSession(db, id, expire, clock.now(), true);
  });

  async function load(merchant: MerchantContext, id: string): Promise<queries.CheckoutSessionRow> {
    const row = await queries.selectSession(db, merchant.merchantId, merchant.mode, id);
    if (!row) throw notFound('checkout session', id);
    return row;
  }

  return {
    /**
     * The session's payment went through (src/payments/checkout-hook.ts), inside the transaction
     * that records it: the session is complete with it in that transaction or not at all. No row:
     * the session was completed by this payment already (settled after processing), or it expired
     * while the processor answered; the payment stands either way (its events tell the merchant).
     */
    async paymentPaid(tx: Queryable, paid: CheckoutPayment): Promise<void> {
      await queries.completeSession(tx, paid.checkoutSessionId, paid.paymentId, complete, clock.now());
    },

    async create(merchant: MerchantContext, input: CreateCheckoutSessionBody): Promise<CheckoutSession> {
      const now = clock.now();
      checkPaymentMethodTypes(input.paymentMethodTypes);
      checkStoring(merchant, input);
      const row: queries.CheckoutSessionRow = {
        id: newId('cs'),
        merchant_id: merchant.merchantId,
        mode: merchant.mode,
        status: 'open',
        amount_total: amountOf(input).toString(),
        currency: parseCurrencyField(input.currency),
        customer_id: input.customer ?? null,
        details: await detailsOf(deps, input),
        payment_id: null,
        expires_at: expiryOf(input, now),
        created_at: now,
      };
      if (row.customer_id !== null) await deps.customers.require(db, merchant, row.customer_id, 'customer');
      await db.transaction(async (tx) => {
        await queries.insertSession(tx, row);
        await jobs.schedule(tx, expireJobKind, row.id, row.expires_at);
      });
      return toCheckoutSession(deps, row);
    },

    async retrieve(merchant: MerchantContext, id: string): Promise<CheckoutSession> {
      return toCheckoutSession(deps, await load(merchant, id));
    },

    async list(merchant: MerchantContext, query: ListCheckoutSessionsQuery): Promise<Page<CheckoutSession>> {
      const { rows, hasMore } = await queries.selectSessionPage(
        db,
        merchant.merchantId,
        merchant.mode,
        query.status,
        query,
      );
      return { data: rows.map((row) => toCheckoutSession(deps, row)), hasMore };
    },

    /** POST …/expire: an open session can no longer be paid; a complete one is refused. */
    async expire(merchant: MerchantContext, id: string): Promise<CheckoutSession> {
      const current = await queries.selectSession(db, merchant.merchantId, merchant.mode, id);
      if (current) await cancelPending(current);
      const row = await queries.expireOwnSession(db, merchant.merchantId, merchant.mode, id, expire, clock.now());
      if (row) return toCheckoutSession(deps, row);
      const now = await load(merchant, id);
      throw new DomainError('invalid_state', `The checkout session is ${now.status}; only an open one can be expired`);
    },
  };
}

export type CheckoutService = ReturnType<typeof createCheckoutService>;
