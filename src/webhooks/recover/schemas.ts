import { Type, type Static } from 'typebox';
import { Timestamp } from '../../core/common-schemas.js';

const WindowBound = (description: string) =>
  Type.String({
    format: 'date-time',
    'x-rule': 'must be an ISO 8601 timestamp',
    examples: ['2026-11-22T18:30:00.000Z'],
    description,
  });

export const RecoverBody = Type.Object(
  {
    since: WindowBound(
      'Events created at or after this time. Not in the future, and not older than the retention of events and ' +
        'deliveries (TESSERA_EVENT_RETENTION_DAYS, TESSERA_DELIVERY_RETENTION_DAYS; 30 days by default).',
    ),
    until: Type.Optional(WindowBound('Events created at or before this time; default now. After `since`.')),
  },
  { additionalProperties: false },
);
export type RecoverBody = Static<typeof RecoverBody>;

export const Recovery = Type.Object(
  {
    endpointId: Type.String(),
    since: Timestamp,
    until: Timestamp,
    events: Type.Integer({ description: 'Events in the window that the endpoint had not acknowledged: sent again' }),
    deliveriesCreated: Type.Integer({
      description: "New deliveries made for them, sent one at a time in the events' order, the first at once",
    }),
    deliveriesRescheduled: Type.Integer({
      description:
        'Deliveries of them still retrying, sent again in their places in that order instead of doubled (one ' +
        'whose attempt is under way is left to that attempt)',
    }),
  },
  { $id: 'WebhookEndpointRecovery' },
);
export type Recovery = Static<typeof Recovery>;
