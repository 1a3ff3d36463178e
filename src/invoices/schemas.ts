import { Type, type Static } from 'typebox';
import { ListQuery } from '../http/envelope.js';
import { Nullable, Timestamp } from '../core/common-schemas.js';
import { invoiceStatuses } from './states.js';

export const collectionMethods = ['charge_automatically', 'send_invoice'] as const;
export type CollectionMethod = (typeof collectionMethods)[number];

/** docs/api.md#requests, docs/api.md#compatibility-with-existing-clients: minor units as a string of digits or a whole number; at most 12 digits. */
const UnitAmount = Type.Union(
  [Type.String({ pattern: '^\\d{1,12}$' }), Type.Integer({ minimum: 0, maximum: 999_999_999_999 })],
  {
    'x-rule': 'must be a string of digits (minor units) or a whole number, at most 12 digits',
    description: 'The price of one unit in the minor units of the currency (USD "1999" is 19.99)',
    examples: ['1999'],
  },
);

/** docs/api.md#compatibility-with-existing-clients: quantity as a number or a numeric string. */
const Quantity = Type.Union(
  [Type.String({ pattern: '^(?:[1-9]\\d{0,5}|1000000)$' }), Type.Integer({ minimum: 1, maximum: 1_000_000 })],
  {
    'x-rule': 'must be a whole number from 1 to 1000000 (or such a number as a string)',
    description: 'How many units; 1 when left out',
  },
);

const LineItem = Type.Object(
  {
    description: Type.String({ minLength: 1, maxLength: 500 }),
    amount: UnitAmount,
    quantity: Type.Optional(Quantity),
  },
  { additionalProperties: false },
);

const CurrencyCode = Type.String({
  pattern: '^[A-Za-z]{3}$',
  'x-rule': 'must be a three-letter ISO 4217 currency code',
  examples: ['USD'],
});

/** Free-form key/value pairs for the merchant's own use; keys are checked by the service (1–40 characters). */
const Metadata = Type.Record(Type.String(), Type.String({ maxLength: 500 }), {
  maxProperties: 50,
  'x-rule': 'must be an object of at most 50 text values of at most 500 characters',
  description: 'Up to 50 keys (1–40 characters) with text values (≤ 500); an update replaces the whole object',
});

const DueDate = Type.String({
  format: 'date-time',
  'x-rule': 'must be an ISO 8601 timestamp',
  description: 'send_invoice only: when the invoice is due; in the future',
  examples: ['2026-12-31T00:00:00.000Z'],
});

const invoiceFields = {
  customerId: Type.String({ minLength: 1, maxLength: 64, description: 'cus_…' }),
  currency: CurrencyCode,
  lineItems: Type.Array(LineItem, { minItems: 1, maxItems: 100 }),
  collectionMethod: Type.Enum(collectionMethods, {
    description:
      '`charge_automatically`: the customer’s bound card is charged (MIT) when the invoice is finalized; ' +
      '`send_invoice`: the customer is e-mailed a link to the hosted invoice page',
  }),
  daysUntilDue: Type.Integer({
    minimum: 0,
    maximum: 365,
    description:
      'send_invoice only: the due date is this many days after finalization (30 when neither it nor dueDate is sent)',
  }),
  dueDate: DueDate,
  paymentMethod: Type.String({
    minLength: 1,
    maxLength: 64,
    description:
      'pm_… of the customer, bound by a storing payment; when left out, the customer’s most recently bound card',
  }),
  description: Type.String({
    maxLength: 1000,
    description: 'Shown on the hosted page and in the e-mail; may be empty',
  }),
  metadata: Metadata,
};

export const CreateInvoiceBody = Type.Object(
  {
    customerId: invoiceFields.customerId,
    currency: invoiceFields.currency,
    lineItems: invoiceFields.lineItems,
    collectionMethod: invoiceFields.collectionMethod,
    daysUntilDue: Type.Optional(invoiceFields.daysUntilDue),
    dueDate: Type.Optional(invoiceFields.dueDate),
    paymentMethod: Type.Optional(invoiceFields.paymentMethod),
    description: Type.Optional(invoiceFields.description),
    metadata: Type.Optional(invoiceFields.metadata),
  },
  { additionalProperties: false },
);
export type CreateInvoiceBody = Static<typeof CreateInvoiceBody>;

/** A draft takes every field; an open invoice only description, metadata, daysUntilDue and dueDate. */
export const UpdateInvoiceBody = Type.Object(
  Object.fromEntries(Object.entries(invoiceFields).map(([name, schema]) => [name, Type.Optional(schema)])) as {
    [K in keyof typeof invoiceFields]: ReturnType<typeof Type.Optional<(typeof invoiceFields)[K]>>;
  },
  { additionalProperties: false },
);
export type UpdateInvoiceBody = Static<typeof UpdateInvoiceBody>;

/** Fields that may still change once the invoice is open (docs/api.md#invoices: only a draft is fully edited). */
export const openInvoiceFields = ['description', 'metadata', 'daysUntilDue', 'dueDate'] as const;

export const PayInvoiceBody = Type.Object(
  {
    paymentMethod: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description:
          'pm_… of the customer, bound by a storing payment; else the invoice’s own, else the customer’s latest bound card',
      }),
    ),
  },
  { additionalProperties: false },
);
export type PayInvoiceBody = Static<typeof PayInvoiceBody>;

export const InvoiceParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

const CreatedBound = Type.String({
  format: 'date-time',
  'x-rule': 'must be an ISO 8601 timestamp',
  examples: ['2026-11-22T18:30:00.000Z'],
});

/** Query keys are literal, brackets included: `created[gte]=2026-11-01T00:00:00.000Z`. */
export const ListInvoicesQuery = Type.Object(
  {
    ...ListQuery,
    customerId: Type.Optional(Type.String({ maxLength: 64 })),
    status: Type.Optional(Type.Enum(invoiceStatuses)),
    'created[gt]': Type.Optional(CreatedBound),
    'created[gte]': Type.Optional(CreatedBound),
    'created[lt]': Type.Optional(CreatedBound),
    'created[lte]': Type.Optional(CreatedBound),
  },
  { additionalProperties: false },
);
export type ListInvoicesQuery = Static<typeof ListInvoicesQuery>;

const Digits = Type.String({ pattern: '^\\d+$', description: 'Minor units', examples: ['1999'] });

export const InvoiceLineItem = Type.Object({
  description: Type.String(),
  amount: Type.String({ pattern: '^\\d+$', description: 'Unit price in minor units' }),
  quantity: Type.Integer(),
});
export type InvoiceLineItem = Static<typeof InvoiceLineItem>;

export const PaymentError = Type.Object({
  code: Type.String({ examples: ['card_declined'] }),
  message: Type.String(),
});

export const Invoice = Type.Object(
  {
    id: Type.String({ pattern: '^in_\\d{19}$' }),
    customerId: Type.String(),
    currency: Type.String({ pattern: '^[A-Z]{3}$' }),
    lineItems: Type.Array(InvoiceLineItem),
    number: Nullable(Type.String({ description: 'Unique per merchant, e.g. ACME-0001; assigned at finalize' })),
    amountDue: Digits,
    amountPaid: Digits,
    amountRemaining: Digits,
    collectionMethod: Type.Enum(collectionMethods),
    daysUntilDue: Nullable(Type.Integer()),
    dueDate: Nullable(Timestamp),
    paymentMethod: Nullable(Type.String()),
    description: Nullable(Type.String()),
    metadata: Nullable(Type.Record(Type.String(), Type.String())),
    status: Type.Enum(invoiceStatuses),
    hostedInvoiceUrl: Nullable(
      Type.String({ description: 'The page where the customer sees and pays the invoice; set at finalize' }),
    ),
    paymentId: Nullable(Type.String({ description: 'The payment that paid the invoice, or the latest attempt' })),
    attemptCount: Type.Integer({ description: 'Payment attempts that ended (succeeded or failed)' }),
    nextPaymentAttempt: Nullable(Timestamp),
    lastPaymentError: Nullable(PaymentError),
    finalizedAt: Nullable(Timestamp),
    paidAt: Nullable(Timestamp),
    voidedAt: Nullable(Timestamp),
    markedUncollectibleAt: Nullable(Timestamp),
    created: Timestamp,
  },
  { $id: 'Invoice' },
);
export type Invoice = Static<typeof Invoice>;

export const DeletedInvoice = Type.Object({ id: Type.String(), deleted: Type.Boolean() });
