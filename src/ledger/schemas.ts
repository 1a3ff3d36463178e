import { Type, type Static } from 'typebox';
import { ListQuery } from '../http/envelope.js';
import { CreatedFilters, Nullable, Timestamp } from '../core/common-schemas.js';
import { balanceTransactionTypes } from './queries.js';

const Currency = Type.String({ pattern: '^[A-Z]{3}$', examples: ['USD'] });
const SignedAmount = Type.String({
  pattern: '^-?\\d+$',
  description: 'Minor units, signed: money in is positive, money out negative',
  examples: ['1911'],
});

export const BalanceTransactionParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

const Bound = Type.String({
  format: 'date-time',
  'x-rule': 'must be an ISO 8601 timestamp',
  examples: ['2026-11-22T18:30:00.000Z'],
});

/** Query keys are literal, brackets included: `availableOn[lte]=2026-11-24T00:00:00.000Z`. */
export const ListBalanceTransactionsQuery = Type.Object(
  {
    ...ListQuery,
    type: Type.Optional(Type.Enum(balanceTransactionTypes)),
    source: Type.Optional(Type.String({ maxLength: 64, description: 'Entries of this object (pt_, re_, po_ …)' })),
    payoutId: Type.Optional(Type.String({ maxLength: 64, description: 'Entries settled by this payout (po_…)' })),
    ...CreatedFilters,
    'availableOn[gt]': Type.Optional(Bound),
    'availableOn[gte]': Type.Optional(Bound),
    'availableOn[lt]': Type.Optional(Bound),
    'availableOn[lte]': Type.Optional(Bound),
  },
  { additionalProperties: false },
);
export type ListBalanceTransactionsQuery = Static<typeof ListBalanceTransactionsQuery>;

export const FeeDetail = Type.Object({
  type: Type.String({
    description: '`tessera_fee` (the merchant’s schedule), `processor_fee` or `dispute_fee` (a chargeback’s)',
  }),
  amount: Type.String({ pattern: '^-?\\d+$', description: 'Minor units', examples: ['88'] }),
  description: Type.String(),
});

export const BalanceTransaction = Type.Object(
  {
    id: Type.String({ pattern: '^txn_\\d{19}$' }),
    type: Type.Enum(balanceTransactionTypes),
    source: Type.String({ description: 'The object that moved the money: a payment, refund or payout id' }),
    amount: SignedAmount,
    fee: Type.String({
      pattern: '^-?\\d+$',
      description: 'Minor units; 0 on refunds (fees are not returned)',
      examples: ['88'],
    }),
    feeDetails: Type.Array(FeeDetail),
    net: Type.String({
      pattern: '^-?\\d+$',
      description: 'amount − fee: what the entry adds to the balance',
      examples: ['1911'],
    }),
    currency: Currency,
    status: Type.Union([Type.Literal('pending'), Type.Literal('available')], {
      description: '`available` from availableOn on',
    }),
    availableOn: Timestamp,
    payoutId: Nullable(Type.String({ description: 'The automatic payout that settled the entry, if one has' })),
    reportingCategory: Type.String({
      description: '`charge`, `refund`, `refund_failure`, `charge_failure` (a reversal), `payout`, `payout_reversal`',
    }),
    created: Timestamp,
  },
  { $id: 'BalanceTransaction' },
);
export type BalanceTransaction = Static<typeof BalanceTransaction>;

const Funds = Type.Array(Type.Object({ amount: SignedAmount, currency: Currency }));

export const Balance = Type.Object({
  available: Funds,
  pending: Funds,
});
export type Balance = Static<typeof Balance>;

export const BalanceSummaryQuery = Type.Object(
  {
    from: Type.String({ ...Bound, description: 'Start of the period (included)' }),
    to: Type.String({ ...Bound, description: 'End of the period (excluded)' }),
  },
  { additionalProperties: false },
);
export type BalanceSummaryQuery = Static<typeof BalanceSummaryQuery>;

export const BalanceSummary = Type.Object({
  from: Timestamp,
  to: Timestamp,
  currencies: Type.Array(
    Type.Object({
      currency: Currency,
      openingBalance: SignedAmount,
      activity: Type.Array(
        Type.Object({
          reportingCategory: Type.String(),
          count: Type.Integer(),
          gross: SignedAmount,
          fee: SignedAmount,
          net: SignedAmount,
        }),
      ),
      closingBalance: SignedAmount,
    }),
  ),
});
export type BalanceSummary = Static<typeof BalanceSummary>;
