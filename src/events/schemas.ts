import { Type, type Static } from 'typebox';
import { ListQuery } from '../http/envelope.js';
import { Timestamp } from '../http/common-schemas.js';

/** SPEC §6.2, written exactly as the spec writes them (three invoice codes start upper case). */
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
] as const;
export type EventType = (typeof eventTypes)[number];

export const EventParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

export const ListEventsQuery = Type.Object(
  {
    ...ListQuery,
    type: Type.Optional(Type.String({ maxLength: 64 })),
    objectId: Type.Optional(Type.String({ maxLength: 64, description: 'Events about this object, e.g. a payment id' })),
  },
  { additionalProperties: false },
);
export type ListEventsQuery = Static<typeof ListEventsQuery>;

/** SPEC §6.3 body plus `id`; `data` is the object as it was when the event happened. */
export const Event = Type.Object({
  id: Type.String({ pattern: '^evt_\\d{19}$' }),
  apiVersion: Type.Literal('v1'),
  type: Type.String(),
  created: Timestamp,
  data: Type.Object({}, { additionalProperties: true }),
});
export type Event = Static<typeof Event>;
