/**
 * Paying on the hosted checkout page (docs/checkout.md). The card form's post becomes a new card payment
 * method (through the payment methods service, as any card) and a payment created through the
 * payment service with the session's fields, exactly as POST /payment/create would take them
 * (notifyUrl, orderNo, preAuth, setupFutureUsage…, so every event is sent as for any payment).
 * The challenge card goes through the existing 3-D Secure page, which returns here.
 *
 * Paid at most once: a post first holds the session with a conditional update (queries.holdSession),
 * so of two tabs posting at once only one creates a payment; the other sees the attempt under way.
 * The payment names its session, and the database lets one payment at most of a session still go
 * through (payments_checkout_session), whatever happens to the hold (it lasts two minutes). The
 * session becomes complete in the transaction that records its payment's success
 * (src/payments/checkout-hook.ts), never after it: a crash cannot leave a paid session open.
 * A declined card releases the hold and the page shows the reason; the session may be tried again.
 * Card data goes nowhere but into the vault: nothing here logs, and refused forms show empty fields.
 */
import type { Db } from '../db/db.js';
import type { Clock } from '../clock.js';
import type { MerchantContext } from '../core/merchant-context.js';
import { DomainError } from '../core/errors.js';
import { isId } from '../ids.js';
import { withQueryParameters } from '../return-url.js';
import type { MerchantService } from '../merchants/service.js';
import type { PaymentMethodService } from '../payment-methods/service.js';
import type { CreatePaymentBody } from '../payments/schemas.js';
import type { Payment } from '../payments/payment-object.js';
import type { PaymentService } from '../payments/service.js';
import { cardRefusal, readCardForm, type CardForm, type CardFormState } from '../shopper/card-form.js';
import { declineMessageKey, type MessageKey } from '../shopper/messages.js';
import type { CheckoutPageView } from '../shopper/checkout-page.js';
import * as queries from './queries.js';

export interface HostedCheckoutDeps {
  db: Db;
  clock: Clock;
  merchants: Pick<MerchantService, 'retrieve'>;
  paymentMethods: Pick<PaymentMethodService, 'create'>;
  payments: Pick<PaymentService, 'createForCheckout' | 'retrieve' | 'cancel'>;
  publicUrl: () => string;
}

/** The page's view with the session's whole row (the page reads part of it). */
export type SessionPageView = CheckoutPageView & { session: queries.CheckoutSessionRow };

export type HostedCheckoutResult =
  | { kind: 'not_found' }
  | { kind: 'page'; status: number; view: SessionPageView; state?: CardFormState }
  | { kind: 'redirect'; location: string };

/** How long a form post holds the session, and a payment awaiting 3-D Secure. */
const attemptHoldMs = 2 * 60 * 1000;
const challengeHoldMs = 15 * 60 * 1000;

/** docs/checkout.md: the shopper goes back to returnUrl with payment_id added, `?` or `&` as needed. */
export function returnUrlWith(returnUrl: string, paymentId: string): string {
  return withQueryParameters(returnUrl, { payment_id: paymentId });
}

async function merchantOfSession(deps: HostedCheckoutDeps, row: queries.CheckoutSessionRow) {
  const merchant = await deps.merchants.retrieve(row.merchant_id);
  const context: MerchantContext = {
    merchantId: row.merchant_id,
    mode: row.mode as MerchantContext['mode'],
    keyKind: 'private',
    tokenizationEnabled: merchant.tokenization,
    mitEnabled: merchant.mit,
  };
  const brand = { name: merchant.name, brandColor: merchant.brandColor, logoUrl: merchant.logoUrl };
  return { context, brand };
}

/** The page of a session as it is now (a missing id and a malformed one look the same). */
export async function checkoutPage(
  deps: HostedCheckoutDeps,
  id: string,
  declined?: MessageKey,
): Promise<SessionPageView | null> {
  if (!isId('cs', id)) return null;
  const row = await queries.selectSessionById(deps.db, id);
  if (!row) return null;
  const { brand } = await merchantOfSession(deps, row);
  const now = deps.clock.now();
  const expired = row.status === 'open' && row.expires_at <= now;
  const session = expired ? { ...row, status: 'expired' as const } : row;
  // A post in flight; a payment awaiting 3-D Secure may be replaced by a new card.
  const pending = !row.pending_payment_id && !!row.attempt_until && row.attempt_until > now;
  return { session, brand, pending, ...(declined ? { declined } : {}) };
}

/** The session's fields as a payment request (docs/checkout.md: as through the API). */
function paymentRequest(row: queries.CheckoutSessionRow, paymentMethod: string, returnUrl: string): CreatePaymentBody {
  const { details } = row;
  const defined = <T extends object>(value: T) =>
    Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null && v !== undefined)) as Partial<T>;
  return {
    amount: row.amount_total,
    currency: row.currency,
    paymentMethod,
    confirm: 'true',
    returnUrl,
    preAuth: details.preAuth,
    setupFutureUsage: details.setupFutureUsage,
    ...(row.customer_id ? { customerId: row.customer_id } : {}),
    ...(details.orderNo !== null ? { orderNo: details.orderNo } : {}),
    ...(details.notifyUrl ? { notifyUrl: details.notifyUrl } : {}),
    ...(details.statementDescriptor !== null ? { statementDescriptor: details.statementDescriptor } : {}),
    ...(details.website ? { website: details.website } : {}),
    ...(details.customerEmail ? { receiptEmail: details.customerEmail } : {}),
    ...(details.lineItems ? { lineItems: details.lineItems.map((item) => defined(item)) } : {}),
    ...(details.shipping
      ? {
          shipping: defined({
            ...details.shipping,
            address: details.shipping.address ? defined(details.shipping.address) : null,
          }),
        }
      : {}),
  } as CreatePaymentBody;
}

async function cardMethod(deps: HostedCheckoutDeps, merchant: MerchantContext, card: CardForm) {
  try {
    return await deps.paymentMethods.create(merchant, {
      type: 'card',
      card: { cardNo: card.cardNo, expMonth: card.expMonth, expYear: card.expYear, securityCode: card.securityCode },
      billingDetails: { firstName: card.firstName, ...(card.lastName ? { lastName: card.lastName } : {}) },
    });
  } catch (err) {
    const refusal = err instanceof DomainError ? cardRefusal(err) : null;
    if (!refusal) throw err;
    return refusal;
  }
}

/** Where the payment's outcome sends the shopper: the shop (paid), 3-D Secure, or this page again. */
async function settle(
  deps: HostedCheckoutDeps,
  row: queries.CheckoutSessionRow,
  payment: Payment,
): Promise<HostedCheckoutResult> {
  if (payment.status === 'requires_action' && payment.nextAction) {
    await queries.holdForChallenge(deps.db, row.id, payment.id, new Date(deps.clock.now().getTime() + challengeHoldMs));
    return { kind: 'redirect', location: inSessionLanguage(payment.nextAction.redirectToUrl, row.details.locale) };
  }
  if (['succeeded', 'requires_capture', 'processing'].includes(payment.status)) {
    // Completed with the payment's success, in its transaction; a payment still being authorized
    // (processing, claimed) has not, and the page says a payment is under way.
    const paid = await paidOrPageAgain(deps, row.id);
    // The merchant expired the session while the processor answered: the payment stands, and the
    // shop is told which it is rather than the shopper being shown an expired page after paying.
    const wentThrough = payment.status === 'succeeded' || payment.status === 'requires_capture';
    if (paid.location === `/checkout/${row.id}` && wentThrough) {
      return { kind: 'redirect', location: returnUrlWith(row.details.returnUrl, payment.id) };
    }
    return paid;
  }
  await queries.releaseSession(deps.db, row.id);
  // The shopper reads what the decline means for them, not the processor's words.
  const view = await checkoutPage(deps, row.id, declineMessageKey(payment.errorCode));
  return view ? { kind: 'page', status: 200, view } : { kind: 'not_found' };
}

export async function payOnCheckoutPage(
  deps: HostedCheckoutDeps,
  id: string,
  form: Record<string, unknown>,
): Promise<HostedCheckoutResult> {
  const view = await checkoutPage(deps, id);
  if (!view) return { kind: 'not_found' };
  const pageAgain = { kind: 'redirect', location: `/checkout/${id}` } as const;
  if (view.session.status !== 'open' || view.pending) return pageAgain;
  const read = readCardForm(form);
  if ('state' in read) return { kind: 'page', status: 400, view, state: read.state };

  const now = deps.clock.now();
  const awaiting = view.session.pending_payment_id ?? null;
  const row = await queries.holdSession(deps.db, id, awaiting, now, new Date(now.getTime() + attemptHoldMs));
  // Another tab's post holds it, or it was paid or expired meanwhile: the page says which.
  if (!row) return pageAgain;
  try {
    const { context } = await merchantOfSession(deps, row);
    if (awaiting !== null) {
      const earlier = await abandon(deps, context, awaiting);
      // The challenge was answered meanwhile and the earlier payment went through: it pays the session.
      if (earlier) return await settle(deps, row, earlier);
    }
    const method = await cardMethod(deps, context, read.card);
    if (!('id' in method)) {
      await queries.releaseSession(deps.db, id);
      const kept = { expiry: read.card.expMonth + '/' + read.card.expYear.slice(2), name: String(form.name ?? '') };
      return { kind: 'page', status: 400, view, state: { errors: { [method.field]: method.message }, ...kept } };
    }
    const returnUrl = `${deps.publicUrl()}/checkout/${id}/return`;
    const payment = await deps.payments.createForCheckout(context, paymentRequest(row, method.id, returnUrl), id);
    return await settle(deps, row, payment);
  } catch (err) {
    await queries.releaseSession(deps.db, id);
    if (!(err instanceof DomainError)) throw err;
    // Another payment of the session went through meanwhile (this one was refused): the shop hears of that one.
    const paid = await paidOrPageAgain(deps, id);
    if (paid.location !== `/checkout/${id}`) return paid;
    return { kind: 'page', status: 400, view, state: { errors: { form: 'paymentFailed' } } };
  }
}

/** The shop's returnUrl with the payment that completed the session, or this page again. */
async function paidOrPageAgain(deps: HostedCheckoutDeps, id: string) {
  const row = await queries.selectSessionById(deps.db, id);
  if (row?.status === 'complete' && row.payment_id) {
    return { kind: 'redirect', location: returnUrlWith(row.details.returnUrl, row.payment_id) } as const;
  }
  return { kind: 'redirect', location: `/checkout/${id}` } as const;
}

/**
 * Cancels a payment left awaiting 3-D Secure, for a new card to take its place; answers the
 * payment instead when it can no longer be canceled because it went through.
 */
async function abandon(deps: HostedCheckoutDeps, merchant: MerchantContext, paymentId: string) {
  try {
    await deps.payments.cancel(merchant, paymentId, { cancellationReason: 'abandoned' });
    return null;
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    const payment = await deps.payments.retrieve(merchant, paymentId);
    return ['succeeded', 'requires_capture', 'processing'].includes(payment.status) ? payment : null;
  }
}

/** Back from the 3-D Secure page: the held payment's outcome decides where the shopper goes. */
export async function returnFromChallenge(deps: HostedCheckoutDeps, id: string): Promise<HostedCheckoutResult> {
  if (!isId('cs', id)) return { kind: 'not_found' };
  const row = await queries.selectSessionById(deps.db, id);
  if (!row) return { kind: 'not_found' };
  if (row.status === 'complete' && row.payment_id) {
    return { kind: 'redirect', location: returnUrlWith(row.details.returnUrl, row.payment_id) };
  }
  if (!row.pending_payment_id) return { kind: 'redirect', location: `/checkout/${id}` };
  const { context } = await merchantOfSession(deps, row);
  return settle(deps, row, await deps.payments.retrieve(context, row.pending_payment_id));
}

/**
 * The challenge page in the session's language (docs/checkout.md#the-page: `locale` on the session, else the
 * browser's): a session with a locale of its own hands it on; `auto` or none leaves the browser's.
 */
function inSessionLanguage(challengeUrl: string, locale: string | null | undefined): string {
  return !locale || locale === 'auto' ? challengeUrl : withQueryParameters(challengeUrl, { locale });
}
