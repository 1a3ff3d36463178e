import { Type, type Static } from 'typebox';
import { ListQuery } from '../http/envelope.js';
import { Email, Nullable, ShippingOut, Timestamp, emptyIsAbsent } from '../core/common-schemas.js';
import { BillingDetails, BillingDetailsOut } from '../payment-methods/schemas.js';
import { CreatePaymentBody } from '../payments/schemas.js';
import { LineItemOut } from '../payments/payment-object.js';
import { requestableLocales } from '../shopper/locales.js';
import { checkoutStatuses } from './states.js';

/** The payment fields a session shares with POST /payment/create: the same rules, the same words. */
const payment = CreatePaymentBody.properties;

const Url = (description: string) => Type.Unsafe<string>({ ...payment.returnUrl, description });

/**
 * docs/checkout.md: the fields the provider's store plugins send. Each is validated here as the payment
 * it becomes would validate it, so that a session that was accepted can be paid.
 */
export const CreateCheckoutSessionBody = Type.Object(
  {
    amountTotal: Type.Unsafe<string | number>({
      ...payment.amount,
      description: 'What the shopper pays, in the minor units of the currency ("1999" is 19.99 USD); more than 0',
    }),
    currency: payment.currency,
    orderNo: payment.orderNo,
    customer: Type.Optional(
      Type.String({
        pattern: '^cus_\\d{19}$',
        'x-rule': 'must be a customer id (cus_…)',
        description: 'A customer of the merchant (cus_…) the payment is for; `""` means none',
        ...emptyIsAbsent,
      }),
    ),
    customerEmail: Type.Optional(
      Type.Unsafe<string>({ ...Email, description: "The shopper's e-mail address, shown on the hosted page" }),
    ),
    billingDetails: Type.Optional(BillingDetails),
    lineItems: payment.lineItems,
    shipping: payment.shipping,
    // Unlike a payment's, a session's list is a promise of what the hosted page offers: a type it
    // cannot offer is refused by name (service.ts), not ignored.
    paymentMethodTypes: Type.Optional(
      Type.Array(Type.String({ maxLength: 32 }), {
        maxItems: 16,
        description: 'The methods the hosted page offers: `card` (any case), the only one; any other is refused',
      }),
    ),
    preAuth: payment.preAuth,
    setupFutureUsage: payment.setupFutureUsage,
    statementDescriptor: payment.statementDescriptor,
    website: payment.website,
    returnUrl: Url('Required. Where the shopper goes once the session is paid, with `payment_id` added to the query'),
    cancelUrl: Type.Optional(Url('Where the "cancel" link of the hosted page goes; without it, the page has none')),
    notifyUrl: payment.notifyUrl,
    locale: Type.Optional(
      Type.Enum([...requestableLocales], {
        'x-rule': `must be one of ${requestableLocales.join(', ')}`,
        description:
          "The hosted page's language: one of the listed tags (`ar` is written right to left), or `auto` (the default): the shopper's browser language (Accept-Language), English when none of these",
        ...emptyIsAbsent,
      }),
    ),
    expiresAt: Type.Optional(
      Type.Union([Type.String({ format: 'date-time' }), Type.Integer({ minimum: 0 })], {
        'x-rule': 'must be an ISO 8601 time or Unix seconds, from 30 minutes to 24 hours from now',
        description:
          'When the session expires if not paid: ISO 8601 or Unix seconds, 30 minutes to 24 hours from now (default 24 hours)',
        ...emptyIsAbsent,
      }),
    ),
  },
  { additionalProperties: false },
);
export type CreateCheckoutSessionBody = Static<typeof CreateCheckoutSessionBody>;

export const CheckoutSessionParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

export const ListCheckoutSessionsQuery = Type.Object(
  {
    ...ListQuery,
    status: Type.Optional(Type.Enum([...checkoutStatuses], { description: 'Only sessions in this status' })),
  },
  { additionalProperties: false },
);
export type ListCheckoutSessionsQuery = Static<typeof ListCheckoutSessionsQuery>;

export const CheckoutSession = Type.Object(
  {
    id: Type.String({ pattern: '^cs_\\d{19}$' }),
    url: Type.String({ description: 'The hosted payment page to send the shopper to' }),
    status: Type.Enum([...checkoutStatuses], {
      description: '`open` until paid (`complete`) or expired (`expired`, by time or by /expire)',
    }),
    amountTotal: Type.String({ pattern: '^\\d+$', description: 'Minor units' }),
    currency: Type.String(),
    orderNo: Nullable(Type.Union([Type.String(), Type.Integer()], { description: 'Exactly as sent' })),
    customer: Nullable(Type.String()),
    customerEmail: Nullable(Type.String()),
    billingDetails: Nullable(BillingDetailsOut),
    lineItems: Nullable(Type.Array(LineItemOut)),
    shipping: Nullable(ShippingOut),
    paymentMethodTypes: Type.Array(Type.String()),
    preAuth: Type.String(),
    setupFutureUsage: Type.String(),
    statementDescriptor: Nullable(Type.String()),
    website: Nullable(Type.String()),
    returnUrl: Type.String(),
    cancelUrl: Nullable(Type.String()),
    notifyUrl: Nullable(Type.String()),
    locale: Type.String({ description: 'The language of the hosted page, `auto` when the browser decides' }),
    paymentId: Nullable(Type.String({ description: 'The payment that paid the session, once it is complete' })),
    expiresAt: Timestamp,
    created: Timestamp,
  },
  { $id: 'CheckoutSession' },
);
export type CheckoutSession = Static<typeof CheckoutSession>;
