/**
 * The payment as answered (docs/api.md#payments): the response schemas, apart from the request bodies in
 * schemas.ts. Webhook bodies carry the same object plus `actionStatus`.
 */
import { Type, type Static } from 'typebox';
import { Nullable, ShippingOut, Timestamp } from '../core/common-schemas.js';
import { displayStatuses, paymentStatuses } from './states.js';

const Digits = Type.String({ pattern: '^\\d+$', description: 'Minor units', examples: ['1999'] });

export const LineItemOut = Type.Object({
  amount: Nullable(Type.Number()),
  currency: Nullable(Type.String()),
  description: Nullable(Type.String()),
  images: Nullable(Type.Array(Type.String())),
  name: Nullable(Type.String()),
  quantity: Nullable(Type.Integer()),
});
export type LineItemOut = Static<typeof LineItemOut>;

export const RecurringOut = Type.Object(
  {
    initial: Nullable(Type.Boolean()),
    relationPaymentId: Nullable(Type.String({ description: 'null when sent as `""` or not at all' })),
  },
  { description: 'The recurring series as sent (docs/api.md#recurring-series)' },
);
export type RecurringOut = Static<typeof RecurringOut>;

export const RiskInfo = Type.Object({
  riskScore: Type.Integer({ description: '0 (no risk) to 100' }),
  riskMessage: Type.String({ examples: ['risk_pass'] }),
});

export const NextAction = Type.Object({
  type: Type.Literal('redirect'),
  redirectToUrl: Type.String({ description: 'The hosted 3-D Secure page; send the customer there' }),
});

/** docs/api.md#compatibility-with-existing-clients: the card as it was when the payment used it; store plugins print `type` and `brand`. */
export const PaymentMethodDetails = Type.Object(
  {
    type: Type.Literal('card'),
    card: Type.Object({
      brand: Type.String({ examples: ['visa'] }),
      last4: Type.String({ pattern: '^\\d{4}$', examples: ['4242'] }),
      expMonth: Type.String({ examples: ['12'] }),
      expYear: Type.String({ examples: ['2030'] }),
      country: Type.String({ description: 'Two-letter country of the issuer', examples: ['US'] }),
      fingerprint: Type.String({ description: 'The same for the same card number, as on the payment method' }),
    }),
  },
  {
    description:
      "The payment method as the payment used it (a snapshot, as Stripe's `payment_method_details`); null while the payment has no payment method",
  },
);
export type PaymentMethodDetails = Static<typeof PaymentMethodDetails>;

const paymentObjectFields = {
  id: Type.String({ pattern: '^pt_\\d{19}$' }),
  // docs/api.md#payments request fields, echoed under their exact names; null when not given.
  amount: Type.String({ pattern: '^\\d+$', description: 'Minor units; never null', examples: ['1999'] }),
  currency: Type.String({ pattern: '^[A-Z]{3}$' }),
  confirmationMethod: Type.Enum(['automatic', 'manual']),
  customerId: Nullable(Type.String()),
  // null while the payment is requires_payment_method.
  paymentMethod: Nullable(Type.String()),
  description: Nullable(Type.String()),
  ip: Nullable(Type.String()),
  // docs/api.md#payments types the request field as a string and echoes request fields back, so it is
  // answered as the string, whichever form the request used.
  confirm: Type.Enum(['true', 'false'], {
    description:
      'Whether the create request asked for immediate confirmation, as docs/api.md#payments writes it: "true" or "false"',
  }),
  lineItems: Nullable(Type.Array(LineItemOut)),
  notifyUrl: Nullable(Type.String()),
  orderNo: Nullable(
    Type.Union([Type.String(), Type.Integer()], { description: 'Exactly as sent: text, or a number when sent as one' }),
  ),
  preAuth: Type.Enum(['n', 'y']),
  receiptEmail: Nullable(Type.String()),
  returnUrl: Nullable(Type.String()),
  setupFutureUsage: Type.Enum(['on', 'off']),
  subsequentInitialType: Nullable(
    Type.Enum(['cit', 'mit'], { description: '`mit` on a later payment of a recurring series (`recurring`)' }),
  ),
  statementDescriptor: Nullable(Type.String()),
  statementDescriptorSuffix: Nullable(Type.String()),
  website: Nullable(Type.String()),
  // docs/api.md#requests extras sent by existing clients.
  userAgent: Nullable(Type.String()),
  shipping: Nullable(ShippingOut),
  appScheme: Nullable(Type.String()),
  openUserId: Nullable(Type.String()),
  fromChannel: Nullable(Type.String()),
  automaticPaymentMethods: Nullable(Type.Object({ enabled: Type.Boolean() })),
  recurring: Nullable(RecurringOut),
  // docs/api.md#payments response fields.
  paymentMethodTypes: Type.Array(Type.String(), { examples: [['card']] }),
  paymentMethodType: Type.Literal('card'),
  paymentMethodDetails: Nullable(PaymentMethodDetails),
  clientSecret: Type.String({ description: 'The payment id + `_secret_` + hex; give it only to this payer' }),
  canceledAt: Nullable(Timestamp),
  cancellationReason: Nullable(
    Type.String({ description: 'duplicate, fraudulent, requested_by_customer, abandoned; `automatic` after 7 days' }),
  ),
  amountReceived: Digits,
  amountCapturable: Digits,
  amountRefunded: Type.String({
    pattern: '^\\d+$',
    description: 'Minor units given back by succeeded refunds (pending ones are not counted)',
    examples: ['0'],
  }),
  amountDisputed: Type.String({
    pattern: '^\\d+$',
    description: 'Minor units held by open or lost chargebacks; not refundable (docs/disputes.md, Money)',
    examples: ['0'],
  }),
  disputes: Type.Array(Type.String({ pattern: '^dp_\\d{19}$' }), {
    description: "The payment's disputes, oldest first (GET /disputes/{id})",
  }),
  created: Timestamp,
  riskInfo: Nullable(RiskInfo),
  status: Type.Enum(paymentStatuses),
  displayStatus: Type.Enum(displayStatuses),
  errorCode: Nullable(Type.String()),
  errorMessage: Nullable(Type.String()),
  processorReason: Nullable(
    Type.String({
      description:
        "A real processor's own reason for a decline, as it gave it (Adyen's refusalReason, Stripe's decline_code); null with the sandbox and when nothing was declined",
    }),
  ),
  invoiceId: Nullable(Type.String()),
  use3D: Type.Boolean({ description: 'True when the 3-D Secure process was used' }),
  // docs/api.md#compatibility-with-existing-clients: left out when there is no action (a mobile client tests for its presence).
  nextAction: Type.Optional(NextAction),
};

export const Payment = Type.Object(paymentObjectFields, { $id: 'Payment' });
export type Payment = Static<typeof Payment>;

/** docs/api.md#payments: a payment in a webhook body also carries `actionStatus`. */
export type PaymentEventObject = Payment & { actionStatus: string | null };
