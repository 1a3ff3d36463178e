import { Type, type Static } from 'typebox';
import { Nullable } from '../core/common-schemas.js';
import { payoutIntervals } from './finance-queries.js';

export const weekdays = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;

const CurrencyCode = Type.String({
  pattern: '^[A-Za-z]{3}$',
  'x-rule': 'must be a three-letter ISO 4217 currency code',
  examples: ['USD'],
});

/** The operator's settings of a merchant's money (docs/balances.md), each part optional. */
export const FinanceSettingsInput = {
  fees: Type.Optional(
    Type.Object(
      {
        percentBasisPoints: Type.Optional(
          Type.Integer({ minimum: 0, maximum: 10_000, description: '290 is 2.9 %', examples: [290] }),
        ),
        fixed: Type.Optional(
          Type.Record(
            Type.String({ pattern: '^[A-Za-z]{3}$' }),
            Type.Integer({ minimum: 0, maximum: 999_999_999_999 }),
            {
              description:
                'The fixed part per currency in its minor units; replaces the whole map. A currency not listed pays 30.',
              examples: [{ USD: 30, EUR: 25 }],
            },
          ),
        ),
      },
      { additionalProperties: false },
    ),
  ),
  availabilityDays: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 365,
      description: 'Days after a payment before its net is available for payout (0: at once)',
      examples: [2],
    }),
  ),
  payoutSchedule: Type.Optional(
    Type.Object(
      {
        interval: Type.Enum(payoutIntervals),
        weeklyAnchor: Type.Optional(Type.Enum(weekdays, { description: 'With interval weekly: the day of payouts' })),
        monthlyAnchor: Type.Optional(
          Type.Integer({
            minimum: 1,
            maximum: 31,
            description: "With interval monthly: the day of the month (the month's last day when it has fewer)",
          }),
        ),
      },
      { additionalProperties: false },
    ),
  ),
  bankAccount: Type.Optional(
    Type.Object(
      {
        holderName: Type.String({ minLength: 1, maxLength: 200 }),
        accountNumber: Type.String({
          pattern: '^\\d{4,17}$',
          'x-rule': 'must be 4 to 17 digits',
          description: 'Sealed by the vault; only its last four digits are shown after',
          examples: ['000123456789'],
        }),
        routingNumber: Type.Optional(
          Type.String({
            pattern: '^\\d{9}$',
            'x-rule': 'must be 9 digits',
            description: 'A US (ABA) routing number: 9 digits whose checksum holds; required for USD without iban',
            examples: ['110000000'],
          }),
        ),
        iban: Type.Optional(
          Type.String({
            maxLength: 42,
            description: 'An IBAN (spaces allowed) whose mod-97 checksum holds',
            examples: ['DE89 3704 0044 0532 0130 00'],
          }),
        ),
        currency: CurrencyCode,
      },
      { additionalProperties: false },
    ),
  ),
};

export const FinanceSettings = Type.Object({
  fees: Type.Object({
    percentBasisPoints: Type.Integer(),
    fixed: Type.Record(Type.String(), Type.Integer()),
  }),
  availabilityDays: Type.Integer(),
  payoutSchedule: Type.Object({
    interval: Type.Enum(payoutIntervals),
    weeklyAnchor: Nullable(Type.Enum(weekdays)),
    monthlyAnchor: Nullable(Type.Integer()),
  }),
  bankAccounts: Type.Array(
    Type.Object({
      holderName: Type.String(),
      accountNumberLast4: Type.String({ description: 'The account number is never shown again' }),
      routingNumber: Nullable(Type.String()),
      ibanLast4: Nullable(Type.String()),
      currency: Type.String({ description: 'Payouts in this currency go to this account' }),
    }),
    { description: 'One per currency, by currency (docs/balances.md, Bank accounts)' },
  ),
});
export type FinanceSettings = Static<typeof FinanceSettings>;

export const FinanceSettingsBody = Type.Object(FinanceSettingsInput);
export type FinanceSettingsInput = Static<typeof FinanceSettingsBody>;
