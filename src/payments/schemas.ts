import { Type, type Static } from 'typebox';
import { Email, HttpUrl, RepeatedPathId, Shipping, emptyIsAbsent, notFreeText } from '../core/common-schemas.js';

/** docs/api.md#requests: minor units, as a string of digits or a whole number; at most 12 digits. */
const Amount = Type.Union(
  [Type.String({ pattern: '^\\d{1,12}$' }), Type.Integer({ minimum: 0, maximum: 999_999_999_999 })],
  {
    'x-rule': 'must be a string of digits (minor units) or a whole number, at most 12 digits',
    description:
      'In the minor units of the currency (USD 2 decimals: "1999" is 19.99; JPY 0 decimals). "0" only for a storing payment (zero-amount authorization).',
    examples: ['1999'],
    ...emptyIsAbsent,
  },
);

/** Checked against the ISO 4217 list by the service; any case is accepted, upper case is answered. */
export const CurrencyCode = Type.String({
  pattern: '^[A-Za-z]{3}$',
  'x-rule': 'must be a three-letter ISO 4217 currency code',
  examples: ['USD'],
});

const IpAddress = Type.Union([Type.String({ format: 'ipv4' }), Type.String({ format: 'ipv6' })], {
  'x-rule': 'must be an IPv4 or IPv6 address',
  description: "The payer's IP address",
});

/** An http(s) URL, as HttpUrl, with its own description for the API reference. */
const Url = (description: string) =>
  Type.String({
    maxLength: (HttpUrl as { maxLength?: number }).maxLength,
    pattern: (HttpUrl as { pattern?: string }).pattern,
    'x-rule': 'must be an http or https URL',
    description,
    ...emptyIsAbsent,
  });

/** Characters that card statements and receipts cannot show safely. */
const statementPattern = '^[^<>"\'\\\\]*$';
const statementRule = 'must not contain < > \\ \' or "';

const LineItem = Type.Object(
  {
    // docs/api.md#payments types it only as a number, and store plugins send prices with decimals (19.99);
    // a line item is descriptive (the payment's `amount` is what is charged), so any
    // non-negative number is taken and echoed as sent. Clients also send it as numeric text
    // ("19.99"), taken as that number (docs/api.md#compatibility-with-existing-clients, request-shapes.ts).
    amount: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 999_999_999_999,
        'x-rule': 'must be a number from 0 to 999999999999',
        description:
          'Per unit price of the item, as the merchant shows it; descriptive only, not charged. A number, or numeric text ("19.99"), answered as the number',
      }),
    ),
    currency: Type.Optional(CurrencyCode),
    description: Type.Optional(Type.String({ maxLength: 500 })),
    images: Type.Optional(Type.Array(HttpUrl, { maxItems: 8 })),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 250 })),
    quantity: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 1_000_000,
        description: 'A whole number, or its digits as text ("2"), answered as the number',
      }),
    ),
  },
  { additionalProperties: false },
);

/** docs/api.md#recurring-series; the rules are in recurring.ts. */
const Recurring = Type.Object(
  {
    initial: Type.Optional(
      Type.Boolean({
        description:
          '`true`: the first payment of a series, a storing payment (as `setupFutureUsage: on`; `setupFutureUsage: off` or any `subsequentInitialType` is refused). `false`: a later payment of the series, with `relationPaymentId`',
      }),
    ),
    relationPaymentId: Type.Optional(
      Type.String({
        pattern: '^(pt_\\d{19})?$',
        'x-rule': 'must be a payment id (pt_…)',
        ...emptyIsAbsent,
        description:
          'On a later payment of the series: an earlier succeeded payment of the series (the first or any later one) of this merchant and mode. The payment is merchant-initiated (`subsequentInitialType` `mit`) on that payment\'s customer and payment method: `customerId` and `paymentMethod` may be omitted, or must equal its. `""` means absent',
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      'A recurring series (docs/api.md#recurring-series): `{initial: true}` starts one, `{initial: false, relationPaymentId: "pt_…"}` is a merchant-initiated follow-up. Echoed as sent; `{}` is no series',
  },
);

const AutomaticPaymentMethods = Type.Object(
  { enabled: Type.Boolean() },
  { additionalProperties: false, description: 'Accepted for compatibility; card is the only method' },
);

/** docs/api.md#payments request fields plus the extras that existing clients send (docs/api.md#requests). */
const paymentFields = {
  amount: Amount,
  currency: CurrencyCode,
  confirmationMethod: Type.Enum(['automatic', 'manual'], {
    description:
      '`automatic` (default): after 3-D Secure the payment proceeds; `manual`: it waits for /confirm. Any case is taken (`Manual`)',
    'x-any-case': true,
  }),
  customerId: Type.String({
    minLength: 1,
    maxLength: 64,
    description: 'cus_…; `""` means not given',
    ...emptyIsAbsent,
  }),
  paymentMethod: Type.String({
    minLength: 1,
    maxLength: 64,
    description:
      'pm_…; a payment created without one waits in requires_payment_method until an update gives it one. `""` means not given',
    ...emptyIsAbsent,
  }),
  description: Type.String({ maxLength: 1000 }),
  ip: IpAddress,
  confirm: Type.Union([Type.Boolean(), Type.Enum(['true', 'false'])], {
    'x-rule': 'must be true or false',
    description: '"true" (or true) authorizes at once; answered as the string "true" or "false" (docs/api.md#payments)',
  }),
  lineItems: Type.Array(LineItem, { maxItems: 100 }),
  notifyUrl: Url('Dynamic webhook endpoint for this payment (docs/webhooks.md#acknowledgement-and-retries)'),
  // docs/api.md#compatibility-with-existing-clients: store plugins send their order number as a JSON number or as text; it is answered
  // exactly as sent (a number as the same number), and compared as text.
  orderNo: Type.Union(
    [Type.String({ minLength: 1, maxLength: 64 }), Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })],
    {
      'x-rule': `must be text of 1 to 64 characters or a whole number from 0 to ${Number.MAX_SAFE_INTEGER}`,
      description:
        'Unique among payments of the merchant that have not failed or been canceled. Text or a whole number, answered exactly as sent. Your own identifier: not checked for card numbers',
      ...notFreeText,
    },
  ),
  preAuth: Type.Enum(['n', 'y'], { description: '`y`: authorize only, capture later (default `n`)' }),
  receiptEmail: Email,
  returnUrl: Url('Where the hosted 3-D Secure page sends the customer back, with payment_id added'),
  setupFutureUsage: Type.Enum(['on', 'off'], { description: '`on` stores the credentials for later use' }),
  subsequentInitialType: Type.Enum(['cit', 'mit'], {
    description:
      'A payment with stored credentials; omitted on the first, storing payment. A later payment of a recurring series is `mit` (it may be omitted there)',
  }),
  // docs/api.md#requests sets only a maximum; an empty one (as plugins send for "none") is kept as sent.
  statementDescriptor: Type.String({ maxLength: 22, pattern: statementPattern, 'x-rule': statementRule }),
  statementDescriptorSuffix: Type.String({
    maxLength: 10,
    pattern: statementPattern,
    'x-rule': statementRule,
    description: 'May be empty',
  }),
  website: Url('The merchant site'),
  userAgent: Type.String({ maxLength: 1024 }),
  shipping: Shipping,
  appScheme: Type.String({ minLength: 1, maxLength: 256, description: 'The app to return to (fromChannel APP)' }),
  openUserId: Type.String({ minLength: 1, maxLength: 128, description: "A third-party platform's user id" }),
  use3D: Type.Boolean({ description: 'Asks for 3-D Secure; refused on MIT, where the cardholder is absent' }),
  // docs/api.md#compatibility-with-existing-clients: clients send the types in any case, with nulls among them (dropped); card is the
  // one type Tessera supports, so a list is taken when it includes card and refused otherwise.
  paymentMethodTypes: Type.Array(
    Type.String({ pattern: '^[A-Za-z][A-Za-z0-9_]{0,31}$', 'x-rule': 'must be a payment method type such as card' }),
    {
      maxItems: 16,
      contains: { pattern: '^[Cc][Aa][Rr][Dd]$' },
      'x-rule': 'must include card, the one payment method type Tessera supports',
      description:
        'Must include `card` (any case); other types are accepted and ignored, and `null` items dropped. Answered as `["card"]`',
    },
  ),
  automaticPaymentMethods: AutomaticPaymentMethods,
  recurring: Recurring,
  fromChannel: Type.Enum(['WEB', 'H5', 'APP', 'MINI']),
};

type PaymentFieldName = keyof typeof paymentFields;

function optional<K extends PaymentFieldName>(names: readonly K[]) {
  return Object.fromEntries(names.map((name) => [name, Type.Optional(paymentFields[name])])) as {
    [P in K]: ReturnType<typeof Type.Optional<(typeof paymentFields)[P]>>;
  };
}

const optionalOnCreate = [
  'paymentMethod',
  'confirmationMethod',
  'customerId',
  'description',
  'ip',
  'confirm',
  'lineItems',
  'notifyUrl',
  'orderNo',
  'preAuth',
  'receiptEmail',
  'returnUrl',
  'setupFutureUsage',
  'subsequentInitialType',
  'statementDescriptor',
  'statementDescriptorSuffix',
  'website',
  'userAgent',
  'shipping',
  'appScheme',
  'openUserId',
  'use3D',
  'paymentMethodTypes',
  'automaticPaymentMethods',
  'recurring',
  'fromChannel',
] as const;

export const CreatePaymentBody = Type.Object(
  {
    amount: paymentFields.amount,
    currency: paymentFields.currency,
    ...optional(optionalOnCreate),
  },
  { additionalProperties: false },
);
export type CreatePaymentBody = Static<typeof CreatePaymentBody>;

/** The path's payment id repeated in an action's body (docs/api.md#compatibility-with-existing-clients: the Java SDK sends `paymentId`, apps `id`). */
const repeatedId = {
  id: Type.Optional(RepeatedPathId('payment id')),
  paymentId: Type.Optional(RepeatedPathId('payment id')),
};

/** The route config that checks those fields (src/http/request-shapes.ts). */
export const repeatedPaymentId = { param: 'id', body: ['id', 'paymentId'] } as const;

/** Before processing, every request field may change except how and whether it is confirmed. */
const updatable = [
  'amount',
  'currency',
  'paymentMethod',
  'customerId',
  'description',
  'ip',
  'lineItems',
  'notifyUrl',
  'orderNo',
  'preAuth',
  'receiptEmail',
  'returnUrl',
  'setupFutureUsage',
  'statementDescriptor',
  'statementDescriptorSuffix',
  'website',
  'userAgent',
  'shipping',
  'appScheme',
  'openUserId',
  'use3D',
  'paymentMethodTypes',
  'automaticPaymentMethods',
  'recurring',
  'fromChannel',
] as const;

export const UpdatePaymentBody = Type.Object(
  { ...optional(updatable), ...repeatedId },
  { additionalProperties: false },
);
export type UpdatePaymentBody = Static<typeof UpdatePaymentBody>;

/** What the payer's session may still add when the payment is confirmed. */
export const ConfirmPaymentBody = Type.Object(
  {
    ...optional([
      'paymentMethod',
      'returnUrl',
      'ip',
      'userAgent',
      'receiptEmail',
      'notifyUrl',
      'website',
      'shipping',
    ] as const),
    ...repeatedId,
  },
  { additionalProperties: false },
);
export type ConfirmPaymentBody = Static<typeof ConfirmPaymentBody>;

/** Capture is always of the full amount authorized (docs/api.md#states). */
export const CapturePaymentBody = Type.Object(repeatedId, { additionalProperties: false });

export const cancellationReasons = ['duplicate', 'fraudulent', 'requested_by_customer', 'abandoned'] as const;
export const CancelPaymentBody = Type.Object(
  { cancellationReason: Type.Optional(Type.Enum(cancellationReasons)), ...repeatedId },
  { additionalProperties: false },
);
export type CancelPaymentBody = Static<typeof CancelPaymentBody>;
