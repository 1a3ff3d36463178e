import { Type, type Static } from 'typebox';
import { ListQuery } from '../http/envelope.js';
import {
  Address,
  AddressOut,
  Email,
  HttpUrl,
  Nullable,
  notFreeText,
  PersonName,
  Phone,
  RepeatedPathId,
  Timestamp,
} from '../core/common-schemas.js';

/** docs/api.md#payment-methods: the card number is digits only; spaces and dashes are the merchant's page to strip. */
const CardNumber = Type.String({
  pattern: '^\\d{12,19}$',
  'x-rule': 'must be a string of 12 to 19 digits',
  description: 'The full card number, digits only. Never answered, logged or sent in a webhook.',
  ...notFreeText,
});

// docs/api.md#payment-methods writes the month as two digits and the year as four; existing clients also send
// integers, and card forms the year's last two digits (docs/api.md#compatibility-with-existing-clients), so all are accepted and
// answered as two- and four-digit strings ("30" is 2030; card.ts checks the range).
const ExpMonth = Type.Union(
  [Type.String({ pattern: '^(0?[1-9]|1[0-2])$' }), Type.Integer({ minimum: 1, maximum: 12 })],
  { 'x-rule': 'must be a two-digit month from 01 to 12', description: '"01" to "12" (or the integer 1 to 12)' },
);
const ExpYear = Type.Union(
  [Type.String({ pattern: '^(\\d{2}|\\d{4})$' }), Type.Integer({ minimum: 0, maximum: 9999 })],
  {
    'x-rule': 'must be a four-digit year (or its last two digits)',
    description:
      'Four digits, e.g. "2030" (or the integer); two digits ("30") are taken as 2030. Answered with four digits',
  },
);
const SecurityCode = Type.String({
  pattern: '^\\d{3,4}$',
  'x-rule': 'must be a string of 3 or 4 digits',
  description:
    'CVC/CVV: used for the first authorization only, then erased (docs/api.md#tokenization-rules). Never answered.',
});

export const BillingDetails = Type.Object(
  {
    address: Type.Optional(Address),
    email: Type.Optional(Email),
    firstName: Type.Optional(PersonName),
    lastName: Type.Optional(PersonName),
    phone: Type.Optional(Phone),
    description: Type.Optional(Type.String({ maxLength: 500, description: 'May be empty' })),
  },
  { additionalProperties: false },
);
export type BillingDetails = Static<typeof BillingDetails>;

export const CreatePaymentMethodBody = Type.Object(
  {
    type: Type.Enum(['card'], { description: 'Only `card` is supported' }),
    card: Type.Object(
      {
        cardNo: CardNumber,
        expMonth: ExpMonth,
        expYear: ExpYear,
        securityCode: Type.Optional(SecurityCode),
      },
      { additionalProperties: false },
    ),
    billingDetails: Type.Optional(BillingDetails),
    merchantPaySite: Type.Optional(HttpUrl),
  },
  { additionalProperties: false },
);
export type CreatePaymentMethodBody = Static<typeof CreatePaymentMethodBody>;

/**
 * Only what a cardholder may change without a new card: billing details, site and expiry. Existing
 * clients also send the billing details bare, as the whole body (docs/api.md#compatibility-with-existing-clients): see bareBillingDetails.
 */
export const UpdatePaymentMethodBody = Type.Object(
  {
    billingDetails: Type.Optional(BillingDetails),
    merchantPaySite: Type.Optional(HttpUrl),
    card: Type.Optional(
      Type.Object(
        { expMonth: Type.Optional(ExpMonth), expYear: Type.Optional(ExpYear) },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type UpdatePaymentMethodBody = Static<typeof UpdatePaymentMethodBody>;

export const AttachPaymentMethodBody = Type.Object(
  {
    customerId: Type.String({ minLength: 1, maxLength: 64, description: 'cus_…' }),
    id: Type.Optional(RepeatedPathId('payment method id')),
  },
  { additionalProperties: false },
);
export type AttachPaymentMethodBody = Static<typeof AttachPaymentMethodBody>;

/** Detach takes no field; existing clients repeat the path's id (docs/api.md#compatibility-with-existing-clients). */
export const DetachPaymentMethodBody = Type.Object(
  { id: Type.Optional(RepeatedPathId('payment method id')) },
  { additionalProperties: false },
);

/** The route config that checks the repeated id (src/http/request-shapes.ts). */
export const repeatedPaymentMethodId = { param: 'id', body: ['id'] } as const;
export const repeatedCustomerId = { param: 'customerId', query: ['customerId'] } as const;

export const PaymentMethodParams = Type.Object({ id: Type.String({ maxLength: 64 }) });
export const CustomerPaymentMethodsParams = Type.Object({ customerId: Type.String({ maxLength: 64 }) });

export const ListPaymentMethodsQuery = Type.Object(
  { ...ListQuery, customerId: Type.Optional(RepeatedPathId('customer id')) },
  { additionalProperties: false },
);
export type ListPaymentMethodsQuery = Static<typeof ListPaymentMethodsQuery>;

/** The answered form of billing details: every field present, null when not given. */
export const BillingDetailsOut = Type.Object({
  address: Nullable(AddressOut),
  email: Nullable(Type.String()),
  firstName: Nullable(Type.String()),
  lastName: Nullable(Type.String()),
  phone: Nullable(Type.String()),
  description: Nullable(Type.String()),
});
export type BillingDetailsOut = Static<typeof BillingDetailsOut>;

export const PaymentMethodCard = Type.Object({
  brand: Type.String({ examples: ['visa'] }),
  country: Type.String({ description: 'Two-letter country of the issuer' }),
  expMonth: Type.String({ examples: ['04'] }),
  expYear: Type.String({ examples: ['2030'] }),
  fingerprint: Type.String({ description: 'The same card gives the same fingerprint within one merchant' }),
  last4: Type.String({ pattern: '^\\d{4}$' }),
  tokenType: Nullable(
    Type.String({ description: '`network_token` once a storing payment has provisioned one; null before' }),
  ),
});

export const PaymentMethod = Type.Object(
  {
    id: Type.String({ pattern: '^pm_\\d{19}$' }),
    type: Type.Literal('card'),
    billingDetails: BillingDetailsOut,
    created: Timestamp,
    customerId: Nullable(Type.String({ description: 'Null until attached or bound by a storing payment' })),
    card: PaymentMethodCard,
    merchantPaySite: Nullable(Type.String()),
    // docs/api.md#payment-methods: null for card methods; their populated shape is not specified.
    boleto: Type.Null(),
    pix: Type.Null(),
    creditCardBrazil: Type.Null(),
  },
  { $id: 'PaymentMethod' },
);
export type PaymentMethod = Static<typeof PaymentMethod>;

const billingFields = Object.keys(BillingDetails.properties);

/**
 * docs/api.md#compatibility-with-existing-clients: `POST /payment_methods/{id}/update` also arrives as the bare billing-details object
 * (`{firstName, address, …}`); its fields are moved under `billingDetails`. A body that has
 * `billingDetails` already is left as it is (a bare field beside it is then refused, naming it).
 */
export function bareBillingDetails(body: Record<string, unknown>): Record<string, unknown> {
  if (Object.hasOwn(body, 'billingDetails')) return body;
  const bare = Object.entries(body).filter(([key]) => billingFields.includes(key));
  if (bare.length === 0) return body;
  const rest = Object.fromEntries(Object.entries(body).filter(([key]) => !billingFields.includes(key)));
  return { ...rest, billingDetails: Object.fromEntries(bare) };
}
