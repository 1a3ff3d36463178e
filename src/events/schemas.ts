import { Type, type Static } from 'typebox';
import { ListQuery } from '../http/envelope.js';
import { Timestamp } from '../core/common-schemas.js';

/** docs/webhooks.md#event-codes, written exactly as the spec writes them (three invoice codes start upper case), the payouts' and the disputes'. */
export const eventTypes = [
  'payment.processing',
  'payment.succeeded',
  'payment.failed',
  'payment.requires_capture',
  'payment.canceled',
  'refund.pending',
  'refund.succeeded',
  'refund.failed',
  'invoice.created',
  'invoice.deleted',
  'invoice.payment_succeeds',
  'invoice.payment_failed',
  'Invoice.sent',
  'Invoice.updated',
  'Invoice.voided',
  // docs/balances.md, Payouts: named as docs/webhooks.md#event-codes names the others (endpoint_payout.payout_paid).
  'payout.created',
  'payout.paid',
  'payout.failed',
  'payout.canceled',
  // docs/disputes.md, Events.
  'dispute.created',
  'dispute.updated',
  'dispute.closed',
  'dispute.funds_withdrawn',
  'dispute.funds_reinstated',
] as const;
export type EventType = (typeof eventTypes)[number];

export const EventParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

export const ListEventsQuery = Type.Object(
  {
    ...ListQuery,
    type: Type.Optional(
      Type.String({
        maxLength: 64,
        description:
          'Events of this code, by either name (`payment.succeeded`, `endpoint_payment.payment_succeeded`), any letter case',
      }),
    ),
    objectId: Type.Optional(Type.String({ maxLength: 64, description: 'Events about this object, e.g. a payment id' })),
  },
  { additionalProperties: false },
);
export type ListEventsQuery = Static<typeof ListEventsQuery>;

/** docs/webhooks.md#what-is-sent body plus `id` and `sequence` (docs/webhooks.md#sequence-telling-a-stale-event-from-a-new-one); `data` is the object as it was when the event happened. */
export const Event = Type.Object({
  id: Type.String({ pattern: '^evt_\\d{19}$' }),
  apiVersion: Type.Literal('v1'),
  type: Type.String(),
  created: Timestamp,
  sequence: Type.Integer({
    minimum: 1,
    description:
      'Grows with each event of the same object (per object id): 1 for its first event, then 2, 3, … in the ' +
      'order the changes were committed. A receiver that has processed a higher sequence for the object ' +
      'ignores an event with a lower one: it is stale (docs/webhooks.md#sequence-telling-a-stale-event-from-a-new-one).',
  }),
  data: Type.Object({}, { additionalProperties: true }),
});
export type Event = Static<typeof Event>;
