/**
 * Every sentence a shopper reads on the hosted pages and in the card field, in English; the other
 * languages are in translations/ with the very same keys (the type requires them, and
 * test/shopper-messages.test.ts fails on a missing or empty one). `{name}` marks a value put in.
 * Messages say what to do, never a field's API name: `card.expMonth must be…` is for developers.
 */
import type { ShopperLocale } from './locales.js';
import { ar } from './translations/ar.js';
import { de } from './translations/de.js';
import { es } from './translations/es.js';
import { fr } from './translations/fr.js';
import { it } from './translations/it.js';
import { ja } from './translations/ja.js';
import { ko } from './translations/ko.js';
import { nl } from './translations/nl.js';
import { pl } from './translations/pl.js';
import { ptBR } from './translations/pt-br.js';
import { zhCN } from './translations/zh-cn.js';

export const en = {
  // The card form.
  cardNumber: 'Card number',
  expiry: 'Expiry (MM/YY)',
  expiryPlaceholder: 'MM/YY',
  securityCode: 'Security code',
  securityCodeHint: '3 digits on the back of the card, 4 on the front for American Express',
  nameOnCard: 'Name on card',
  cardDetails: 'Card details',
  cardBrand: 'Card type',
  pay: 'Pay {amount}',
  processing: 'Processing…',
  cancel: 'Cancel and return to the shop',
  // Checks of the card as typed (the browser) and on the server.
  cardNumberMissing: 'Enter your card number.',
  cardNumberIncomplete: 'Your card number is incomplete.',
  cardNumberInvalid: 'Your card number is invalid. Check it and try again.',
  cardBrandUnsupported: 'This type of card is not accepted. Use another card.',
  expiryMissing: 'Enter the expiry date shown on your card.',
  expiryIncomplete: 'Your card’s expiry date is incomplete. Write it as MM/YY.',
  expiryMonthInvalid: 'The expiry month must be from 01 to 12.',
  expiryPast: 'Your card has expired. Check the date or use another card.',
  securityCodeMissing: 'Enter your card’s security code.',
  securityCodeIncomplete: 'Your card’s security code is incomplete.',
  nameMissing: 'Enter the name as it appears on your card.',
  fixErrors: 'Please check the fields marked in red.',
  // Answers of the bank and of the service.
  declinedCard: 'Your card was declined. Try another card or contact your bank.',
  declinedFunds: 'Your card has insufficient funds. Try another card.',
  declinedExpired: 'Your card has expired. Try another card.',
  declinedSecurityCode: 'Your card’s security code is incorrect. Check it and try again.',
  declinedAuthentication: 'Your bank could not confirm it is you. Try again or use another card.',
  declinedOther: 'The payment did not go through. Try again or use another card.',
  paymentFailed: 'The payment could not be made. Nothing was charged; please try again.',
  networkError: 'We could not reach the payment service. Check your connection and try again.',
  busy: 'Your card is already being sent. Please wait.',
  // The checkout page.
  checkoutTitle: 'Pay {merchant}',
  orderSummary: 'Order summary',
  item: 'Item',
  quantity: 'Qty',
  unitPrice: 'Unit price',
  amount: 'Amount',
  total: 'Total',
  checkoutPaid: 'This order has been paid. Thank you.',
  checkoutExpired: 'This checkout has expired. Return to the shop to start again.',
  checkoutPending: 'A payment is being processed. Reload this page in a moment.',
  // The invoice page.
  invoiceTitle: 'Invoice {number} from {merchant}',
  invoice: 'Invoice',
  dueDate: 'Due',
  paidOn: 'Paid',
  statusDue: 'Due',
  statusPaid: 'Paid',
  statusVoid: 'Void: nothing is due',
  payByCard: 'Pay {amount} by card',
  lastPaymentFailed: 'The last payment did not go through.',
  invoicePaid: 'This invoice has been paid. Thank you.',
  invoiceVoid: 'This invoice was voided; nothing is due.',
  invoicePending: 'A payment of this invoice is being processed. Reload this page in a moment to see its result.',
  // Pages without a form.
  notFoundTitle: 'Page not found',
  checkoutNotFound: 'This checkout page does not exist. Check the link or return to the shop.',
  invoiceNotFound: 'This invoice page does not exist. The link is wrong or incomplete.',
  badRequestTitle: 'The form could not be read',
  badRequest: 'Go back to the page and try again.',
  errorTitle: 'Something went wrong',
  errorText: 'Nothing was charged twice. Reload the page to see whether the payment went through.',
  tooManyTitle: 'Too many attempts',
  tooMany: 'Too many card attempts on this page. Try again in {seconds} seconds.',
  unavailableTitle: 'Please try again',
  unavailable: 'This payment page is briefly unavailable. Nothing was charged; try again in a moment.',
  // The 3-D Secure challenge (the sandbox's page of the bank).
  threeDsTitle: '3-D Secure authentication',
  threeDsIntro: 'Your bank asks you to confirm this payment.',
  description: 'Description',
  threeDsPass: 'Pass',
  threeDsFail: 'Fail',
  threeDsSandbox: 'Sandbox: Pass completes authentication, Fail makes it fail.',
  threeDsContinue: 'Continue to your bank',
  threeDsNotFound: 'This authentication page does not exist. The link is wrong or incomplete.',
  threeDsChoose: 'Choose Pass or Fail.',
  threeDsResultTitle: 'Payment authentication',
  threeDsNotNeeded: 'This payment does not need authentication any more.',
  threeDsComplete: 'Authentication complete.',
  threeDsMerchantConfirms: 'Authentication complete. The shop will confirm the payment.',
  threeDsNotCompleted: 'The payment was not completed.',
  payment: 'Payment',
  paymentStatus: 'Status',
  closePage: 'You can close this page.',
} as const;

export type MessageKey = keyof typeof en;
export type Messages = Record<MessageKey, string>;

export const catalogs: Record<ShopperLocale, Messages> = {
  en,
  de,
  fr,
  es,
  it,
  nl,
  'pt-BR': ptBR,
  ja,
  'zh-CN': zhCN,
  ko,
  pl,
  ar,
};

/** The sentence in the shopper's language, with `{name}` filled in (the caller escapes for HTML). */
export function translate(locale: ShopperLocale, key: MessageKey, values: Record<string, string> = {}): string {
  const template = catalogs[locale][key] || en[key];
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => values[name] ?? whole);
}

/** The messages the card scripts show as the shopper types (hosted-form.js, card-frame.js). */
export const browserMessageKeys = [
  'cardNumberMissing',
  'cardNumberIncomplete',
  'cardNumberInvalid',
  'cardBrandUnsupported',
  'expiryMissing',
  'expiryIncomplete',
  'expiryMonthInvalid',
  'expiryPast',
  'securityCodeMissing',
  'securityCodeIncomplete',
  'nameMissing',
  'fixErrors',
  'processing',
  'paymentFailed',
  'networkError',
  'busy',
  'declinedCard',
] as const satisfies readonly MessageKey[];

export function browserMessages(locale: ShopperLocale): Record<string, string> {
  return Object.fromEntries(browserMessageKeys.map((key) => [key, translate(locale, key)]));
}

/** A processor's decline code (src/processor/processor.ts) as the sentence a shopper reads. */
export function declineMessageKey(code: string | null | undefined): MessageKey {
  switch (code) {
    case 'card_declined':
    case 'risk_rejected':
      return 'declinedCard';
    case 'insufficient_funds':
      return 'declinedFunds';
    case 'expired_card':
      return 'declinedExpired';
    case 'incorrect_cvc':
      return 'declinedSecurityCode';
    case 'authentication_failed':
      return 'declinedAuthentication';
    default:
      return 'declinedOther';
  }
}
