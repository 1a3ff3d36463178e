import { Type, type Static } from 'typebox';
import { ListQuery } from '../../http/envelope.js';
import { Nullable, Timestamp } from '../../core/common-schemas.js';

export const deliveryKinds = ['endpoint', 'legacy'] as const;
export type DeliveryKind = (typeof deliveryKinds)[number];

export const deliveryStatuses = ['pending', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof deliveryStatuses)[number];

export const DeliveryParams = Type.Object({ id: Type.String({ maxLength: 64 }) });
export const EventDeliveriesParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

const deliveryFilters = {
  status: Type.Optional(
    Type.Enum(deliveryStatuses, { description: '`failed`: deliveries given up after the last retry' }),
  ),
  endpointId: Type.Optional(Type.String({ maxLength: 64, description: 'we_…' })),
};

export const ListEventDeliveriesQuery = Type.Object(
  { ...ListQuery, ...deliveryFilters },
  { additionalProperties: false },
);
export type ListEventDeliveriesQuery = Static<typeof ListEventDeliveriesQuery>;

export const ListDeliveriesQuery = Type.Object({ ...ListQuery, ...deliveryFilters }, { additionalProperties: false });
export type ListDeliveriesQuery = Static<typeof ListDeliveriesQuery>;

export const ResendEventBody = Type.Object(
  {
    endpointId: Type.Optional(
      Type.String({
        maxLength: 64,
        description:
          "Only this endpoint (we_…); the dynamic endpoint's id resends to the payment's notifyUrl. " +
          'Default: every current target of the event.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ResendEventBody = Static<typeof ResendEventBody>;

export const WebhookDelivery = Type.Object(
  {
    id: Type.String({ pattern: '^wd_\\d{19}$' }),
    eventId: Type.String({ pattern: '^evt_\\d{19}$' }),
    endpointId: Type.String({
      description: "The endpoint whose token signs it; for a notifyUrl delivery, the merchant's dynamic endpoint",
    }),
    url: Type.String({ description: 'Where it is sent' }),
    kind: Type.Enum(deliveryKinds, {
      description:
        '`endpoint`: type `endpoint_<group>.<group>_<action>`, signed with the endpoint token; ' +
        "`legacy`: the plain event code, signed with the merchant's legacy key (docs/webhooks.md#what-is-sent)",
    }),
    type: Type.String({ description: 'The `type` in the body sent' }),
    status: Type.Enum(deliveryStatuses, {
      description: '`pending` until answered `success` (`succeeded`) or given up after the last retry (`failed`)',
    }),
    attempts: Type.Integer({ description: 'Attempts made so far' }),
    nextAttemptAt: Type.Union([Timestamp, Type.Null()], {
      description:
        'When the next attempt is due. Null once the delivery has ended, and while a pending delivery made or ' +
        'rescheduled by a recover waits for the one before it to be answered: a recover sends one at a time, ' +
        "in the events' order (docs/webhooks.md, Recover)",
    }),
    lastAttemptAt: Nullable(Timestamp),
    created: Timestamp,
  },
  { $id: 'WebhookDelivery' },
);
export type WebhookDelivery = Static<typeof WebhookDelivery>;

export const WebhookAttempt = Type.Object(
  {
    id: Type.String({ pattern: '^wa_\\d{19}$' }),
    deliveryId: Type.String({ pattern: '^wd_\\d{19}$', description: 'The delivery this attempt belongs to' }),
    attemptNumber: Type.Integer({
      description: '1 for the first attempt, up to 13 (docs/webhooks.md#acknowledgement-and-retries: 12 follow-ups)',
    }),
    attemptedAt: Timestamp,
    durationMs: Type.Integer(),
    httpStatus: Nullable(Type.Integer({ description: 'Null when no response came (timeout, connection error)' })),
    responseExcerpt: Nullable(Type.String({ description: 'The first 1 KiB of the response body' })),
    error: Nullable(Type.String({ description: 'Why the attempt failed; null when it succeeded' })),
    succeeded: Type.Boolean(),
  },
  { $id: 'WebhookAttempt' },
);
export type WebhookAttempt = Static<typeof WebhookAttempt>;
