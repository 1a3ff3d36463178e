import { Type, type Static } from 'typebox';
import { CreatedFilters } from '../core/common-schemas.js';
import { ListQuery } from '../http/envelope.js';
import { cancellationReasons } from './schemas.js';

/** Path and query parameters of the payment routes. */

export const PaymentParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

/** docs/api.md#compatibility-with-existing-clients: clients also put the reason in the query string (`/cancel?cancellationReason=…`). */
export const CancelPaymentQuery = Type.Object(
  {
    cancellationReason: Type.Optional(
      Type.Enum(cancellationReasons, { description: 'As the body field; when both are sent they must be equal' }),
    ),
  },
  { additionalProperties: false },
);
export type CancelPaymentQuery = Static<typeof CancelPaymentQuery>;

/** Query keys are literal, brackets included: `created[gte]=2026-11-01T00:00:00.000Z`. */
export const ListPaymentsQuery = Type.Object(
  {
    ...ListQuery,
    customerId: Type.Optional(Type.String({ maxLength: 64 })),
    customer: Type.Optional(
      Type.String({
        maxLength: 64,
        description: 'The same filter as customerId, as the Java SDK names it; when both are sent they must be equal',
      }),
    ),
    orderNo: Type.Optional(Type.String({ maxLength: 64 })),
    ...CreatedFilters,
  },
  { additionalProperties: false },
);
export type ListPaymentsQuery = Static<typeof ListPaymentsQuery>;
