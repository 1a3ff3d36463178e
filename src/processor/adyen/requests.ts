/**
 * Tessera's requests as Adyen Checkout API v71 bodies (docs/processors-adyen.md, What is sent).
 * Field names are those of Adyen's published description; the tests send every body through a
 * proxy that refuses anything the description does not allow.
 */

import type { AuthorizeRequest, CaptureRequest, CompleteRedirectRequest, RefundRequest } from '../processor.js';

export interface AdyenAccount {
  merchantAccount: string;
}

function amountOf(amount: bigint, currency: string): { value: number; currency: string } {
  // Adyen's value is an int64 of minor units; JSON carries it as a number, exact up to 2^53.
  if (amount > BigInt(Number.MAX_SAFE_INTEGER) || amount < 0n) throw new Error('The amount is out of Adyen range');
  return { value: Number(amount), currency: currency.toUpperCase() };
}

/** Adyen wants four digits; Tessera keeps what the card was given with (two or four). */
function fourDigitYear(year: string): string {
  return year.length === 2 ? `20${year}` : year;
}

function twoDigitMonth(month: string): string {
  return month.padStart(2, '0');
}

/**
 * `POST /payments`. The stored-credential framework: the first storing payment asks Adyen to keep
 * the card for the shopper (CardOnFile, Ecommerce); a CIT rides on the stored credential with the
 * shopper present (CardOnFile, Ecommerce), an MIT without them (UnscheduledCardOnFile, ContAuth);
 * a payment of a recurring series is a Subscription whatever its initiator. CIT and MIT name the
 * credential by the network reference the first payment got (`paymentMethod.networkPaymentReference`,
 * a field of Adyen's CardDetails).
 */
export function paymentBody(account: AdyenAccount, request: AuthorizeRequest): Record<string, unknown> {
  const { card, initiator } = request;
  const paymentMethod: Record<string, unknown> = {
    type: 'scheme',
    number: card.number,
    expiryMonth: twoDigitMonth(card.expMonth),
    expiryYear: fourDigitYear(card.expYear),
  };
  if (card.securityCode !== null) paymentMethod.cvc = card.securityCode;
  if (card.holderName !== null) paymentMethod.holderName = card.holderName;
  const storedCredential = initiator === 'cit' || initiator === 'mit';
  if (storedCredential && request.networkTransactionId !== null) {
    paymentMethod.networkPaymentReference = request.networkTransactionId;
  }

  const body: Record<string, unknown> = {
    amount: amountOf(request.amount, request.currency),
    reference: request.paymentId,
    merchantAccount: account.merchantAccount,
    paymentMethod,
    shopperInteraction: initiator === 'mit' ? 'ContAuth' : 'Ecommerce',
    returnUrl: request.returnUrl,
    channel: 'Web',
  };
  if (request.orderNo !== null) body.merchantOrderReference = request.orderNo;
  const model = recurringModelOf(request);
  if (model !== null) body.recurringProcessingModel = model;
  if (initiator === 'first_storing') {
    body.storePaymentMethod = true;
    if (request.customerId !== null) body.shopperReference = request.customerId;
  }
  if (!request.capture) body.additionalData = { manualCapture: 'true' };
  return body;
}

/** A one-off payment belongs to no stored-credential model, so it sends none. */
function recurringModelOf(request: AuthorizeRequest): string | null {
  if (request.recurring) return 'Subscription';
  switch (request.initiator) {
    case 'first_storing':
    case 'cit':
      return 'CardOnFile';
    case 'mit':
      return 'UnscheduledCardOnFile';
    case 'one_off':
      return null;
  }
}

/**
 * `POST /payments/details` with what the shopper came back with: `redirectResult` from a GET
 * return, or the older `MD` and `PaRes` form fields of a POST return. Only these fields are
 * passed on; anything else the shopper's browser added is dropped.
 */
export function detailsBody(request: CompleteRedirectRequest): Record<string, unknown> {
  const { params } = request;
  if (params.redirectResult !== undefined && params.redirectResult !== '') {
    return { details: { redirectResult: params.redirectResult } };
  }
  if (params.MD !== undefined && params.PaRes !== undefined) {
    return { details: { MD: params.MD, PaRes: params.PaRes } };
  }
  throw new Error('The shopper came back without redirectResult (nor MD and PaRes): nothing to send to Adyen');
}

/** `POST /payments/{pspReference}/captures`. */
export function captureBody(account: AdyenAccount, request: CaptureRequest): Record<string, unknown> {
  return {
    merchantAccount: account.merchantAccount,
    amount: amountOf(request.amount, request.currency),
    reference: request.paymentId,
  };
}

/** `POST /payments/{pspReference}/cancels`. */
export function cancelBody(account: AdyenAccount, paymentId: string): Record<string, unknown> {
  return { merchantAccount: account.merchantAccount, reference: paymentId };
}

/** `POST /payments/{pspReference}/refunds`: the refund's id is its reference, so REFUND notifications name it. */
export function refundBody(account: AdyenAccount, request: RefundRequest): Record<string, unknown> {
  return {
    merchantAccount: account.merchantAccount,
    amount: amountOf(request.amount, request.currency),
    reference: request.refundId,
  };
}

/** A path below the base URL with the payment's pspReference in it. */
export function modificationPath(pspReference: string, modification: 'captures' | 'cancels' | 'refunds'): string {
  return `/payments/${encodeURIComponent(pspReference)}/${modification}`;
}
