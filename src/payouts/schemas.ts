import { Type, type Static } from 'typebox';
import { ListQuery } from '../http/envelope.js';
import { CreatedFilters, Nullable, Timestamp } from '../core/common-schemas.js';
import { payoutStatuses } from './states.js';

export const PayoutParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

export const CreatePayoutBody = Type.Object(
  {
    amount: Type.Union(
      [Type.String({ pattern: '^(?!0+$)\\d{1,12}$' }), Type.Integer({ minimum: 1, maximum: 999_999_999_999 })],
      {
        'x-rule': 'must be a string of digits (minor units) or a whole number, from 1 to 12 digits and more than 0',
        description: 'Minor units, at most the available balance in the currency',
        examples: ['1500'],
      },
    ),
    currency: Type.String({
      pattern: '^[A-Za-z]{3}$',
      'x-rule': 'must be a three-letter ISO 4217 currency code',
      description: "The bank account's currency",
      examples: ['USD'],
    }),
  },
  { additionalProperties: false },
);
export type CreatePayoutBody = Static<typeof CreatePayoutBody>;

export const ListPayoutsQuery = Type.Object(
  { ...ListQuery, status: Type.Optional(Type.Enum(payoutStatuses)), ...CreatedFilters },
  { additionalProperties: false },
);
export type ListPayoutsQuery = Static<typeof ListPayoutsQuery>;

export const Payout = Type.Object(
  {
    id: Type.String({ pattern: '^po_\\d{19}$' }),
    amount: Type.String({ pattern: '^\\d+$', description: 'Minor units', examples: ['1500'] }),
    currency: Type.String({ pattern: '^[A-Z]{3}$' }),
    status: Type.Enum(payoutStatuses, {
      description: '`pending` → `in_transit` → `paid` | `failed` | `canceled`',
    }),
    automatic: Type.Boolean({ description: 'Made by the payout schedule (true) or by POST /payouts/create' }),
    bankAccountLast4: Type.String({ pattern: '^\\d{4}$' }),
    failureCode: Nullable(Type.String({ examples: ['account_closed'] })),
    failureMessage: Nullable(Type.String()),
    arrivalDate: Nullable(Timestamp),
    created: Timestamp,
  },
  { $id: 'Payout' },
);
export type Payout = Static<typeof Payout>;

export const ReconciliationRow = Type.Object({
  payoutId: Type.String(),
  balanceTransactionId: Type.String(),
  type: Type.String(),
  source: Type.String(),
  orderNo: Nullable(Type.String()),
  created: Timestamp,
  availableOn: Timestamp,
  gross: Type.String({ pattern: '^-?\\d+$', description: 'Minor units, signed', examples: ['1999'] }),
  fee: Type.String({ pattern: '^-?\\d+$', description: 'Minor units', examples: ['88'] }),
  net: Type.String({ pattern: '^-?\\d+$', description: 'gross − fee', examples: ['1911'] }),
  currency: Type.String(),
  cardBrand: Nullable(Type.String()),
  last4: Nullable(Type.String()),
});
export type ReconciliationRow = Static<typeof ReconciliationRow>;

/** The CSV's columns, in order: the JSON rows' fields. */
export const reconciliationColumns = [
  'payoutId',
  'balanceTransactionId',
  'type',
  'source',
  'orderNo',
  'created',
  'availableOn',
  'gross',
  'fee',
  'net',
  'currency',
  'cardBrand',
  'last4',
] as const satisfies ReadonlyArray<keyof ReconciliationRow>;

export const Reconciliation = Type.Object({
  payout: Payout,
  rows: Type.Array(ReconciliationRow, {
    description: 'Every balance transaction the payout settles; their nets sum to its amount',
  }),
});
