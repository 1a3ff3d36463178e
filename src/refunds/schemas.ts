import { Type, type Static } from 'typebox';
import { ListQuery } from '../http/envelope.js';
import { Metadata, MetadataOut, Nullable, Timestamp } from '../core/common-schemas.js';
import { refundStatuses } from './states.js';

export const refundReasons = ['duplicate', 'fraudulent', 'requested_by_customer', 'other'] as const;
export type RefundReason = (typeof refundReasons)[number];

/** Minor units, more than zero: as the payment amount (docs/api.md#requests), but "0" refunds nothing. */
const RefundAmount = Type.Union(
  [Type.String({ pattern: '^(?!0+$)\\d{1,12}$' }), Type.Integer({ minimum: 1, maximum: 999_999_999_999 })],
  {
    'x-rule': 'must be a string of digits (minor units) or a whole number, from 1 to 12 digits and more than 0',
    description:
      "In the minor units of the payment's currency; by default everything that is left to refund on the payment",
    examples: ['500'],
  },
);

export const CreateRefundBody = Type.Object(
  {
    paymentId: Type.String({ minLength: 1, maxLength: 64, description: 'The payment to refund (pt_…)' }),
    amount: Type.Optional(RefundAmount),
    currency: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z]{3}$',
        'x-rule': 'must be a three-letter ISO 4217 currency code',
        description: "Optional; when sent, must be the payment's currency (any case)",
      }),
    ),
    reason: Type.Optional(Type.Enum(refundReasons, { description: '`other` requires a `note`' })),
    note: Type.Optional(
      Type.String({ maxLength: 500, description: 'Why the refund is made; required (not empty) with reason `other`' }),
    ),
    // docs/api.md#compatibility-with-existing-clients: existing clients send a number or `false` here; kept as text.
    description: Type.Optional(
      Type.Union([Type.String({ maxLength: 1000 }), Type.Number(), Type.Literal(false)], {
        'x-rule': 'must be text of at most 1000 characters, a number or false',
        description: 'Your text for the refund; a number is kept as its digits, `false` as empty text',
      }),
    ),
    metadata: Type.Optional(Metadata),
  },
  { additionalProperties: false },
);
export type CreateRefundBody = Static<typeof CreateRefundBody>;

export const RefundParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

const CreatedBound = Type.String({
  format: 'date-time',
  'x-rule': 'must be an ISO 8601 timestamp',
  examples: ['2026-11-22T18:30:00.000Z'],
});

/** Query keys are literal, brackets included: `created[gte]=2026-11-01T00:00:00.000Z`. */
export const ListRefundsQuery = Type.Object(
  {
    ...ListQuery,
    paymentId: Type.Optional(Type.String({ maxLength: 64, description: 'Refunds of this payment' })),
    status: Type.Optional(Type.Enum(refundStatuses)),
    'created[gt]': Type.Optional(CreatedBound),
    'created[gte]': Type.Optional(CreatedBound),
    'created[lt]': Type.Optional(CreatedBound),
    'created[lte]': Type.Optional(CreatedBound),
  },
  { additionalProperties: false },
);
export type ListRefundsQuery = Static<typeof ListRefundsQuery>;

export const Refund = Type.Object(
  {
    id: Type.String({ pattern: '^re_\\d{19}$' }),
    amount: Type.String({ pattern: '^\\d+$', description: 'Minor units', examples: ['500'] }),
    currency: Type.String({ pattern: '^[A-Z]{3}$', description: "The payment's currency" }),
    paymentId: Type.String({ pattern: '^pt_\\d{19}$' }),
    reason: Nullable(Type.Enum(refundReasons)),
    note: Nullable(Type.String()),
    description: Nullable(Type.String()),
    metadata: Nullable(MetadataOut),
    status: Type.Enum(refundStatuses, {
      description: '`pending` until the processor settles the refund, then `succeeded` or `failed`',
    }),
    failureReason: Nullable(
      Type.String({ description: 'Why a failed refund failed, e.g. `card_closed`', examples: ['card_closed'] }),
    ),
    created: Timestamp,
  },
  { $id: 'Refund' },
);
export type Refund = Static<typeof Refund>;
