import { Type, type Static, type TSchema } from 'typebox';
import { eventTypes } from '../../events/schemas.js';
import { ListQuery } from '../../http/envelope.js';
import { HttpUrl, Nullable, Timestamp } from '../../http/common-schemas.js';
import { disabledReasons, endpointHealths, endpointStatuses } from '../health/states.js';

/** Subscribes an endpoint to every event type, present and future. */
export const allEvents = '*';

export { endpointStatuses, type EndpointStatus } from '../health/states.js';

// SPEC §6.2 codes exactly as the spec writes them (three invoice codes start upper case), or '*'.
const enabledEvents = (defaultNote: string) =>
  Type.Array(Type.Enum([...eventTypes, allEvents]), {
    minItems: 1,
    maxItems: 32,
    description:
      'Event codes of SPEC §6.2 exactly as written (e.g. `payment.succeeded`, `Invoice.sent`), or `["*"]` for all; ' +
      `each event is sent in both notification kinds (SPEC §6.4).${defaultNote}`,
  });

const Description = Type.String({ maxLength: 500, description: 'May be empty' });
const legacyNotifications = (defaultNote: string) =>
  Type.Boolean({
    description:
      'Whether the legacy notification (plain event code, signed with the legacy key, SPEC §6.4) is also sent ' +
      `to this endpoint.${defaultNote}`,
  });

export const signatureCases = ['upper', 'lower'] as const;
const signatureCase = (defaultNote: string) =>
  Type.Enum(signatureCases, {
    description:
      "The letter case of the hex `Signature` header (DESIGN §5): `upper` as SPEC §6.3's sample and the provider's " +
      "PHP SDK, `lower` for verifiers that compare case-sensitively with lower-case hex (the provider's Java SDK, " +
      `Webhook.constructEvent).${defaultNote}`,
  });

export const CreateWebhookEndpointBody = Type.Object(
  {
    url: HttpUrl,
    description: Type.Optional(Description),
    enabledEvents: Type.Optional(enabledEvents(' Default `["*"]`.')),
    legacyNotifications: Type.Optional(legacyNotifications(' Default true.')),
    signatureCase: Type.Optional(signatureCase(' Default `upper`.')),
  },
  { additionalProperties: false },
);
export type CreateWebhookEndpointBody = Static<typeof CreateWebhookEndpointBody>;

export const UpdateWebhookEndpointBody = Type.Object(
  {
    url: Type.Optional(HttpUrl),
    description: Type.Optional(Description),
    enabledEvents: Type.Optional(enabledEvents('')),
    legacyNotifications: Type.Optional(legacyNotifications('')),
    signatureCase: Type.Optional(signatureCase('')),
    status: Type.Optional(
      Type.Enum(endpointStatuses, { description: 'A disabled endpoint receives nothing until enabled again' }),
    ),
  },
  { additionalProperties: false },
);
export type UpdateWebhookEndpointBody = Static<typeof UpdateWebhookEndpointBody>;

export const WebhookEndpointParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

export const ListWebhookEndpointsQuery = Type.Object({ ...ListQuery }, { additionalProperties: false });
export type ListWebhookEndpointsQuery = Static<typeof ListWebhookEndpointsQuery>;

/** A nullable field with its own description (the OpenAPI document shows it). */
const NullableField = <T extends TSchema>(schema: T, description: string) =>
  Type.Union([schema, Type.Null()], { description });

const endpointFields = {
  id: Type.String({ pattern: '^we_\\d{19}$' }),
  kind: Type.Enum(['static', 'dynamic'], {
    description:
      '`static`: an endpoint the merchant configured; `dynamic`: the built-in endpoint whose token signs ' +
      "deliveries to a payment's notifyUrl (it has no url of its own)",
  }),
  url: Nullable(Type.String({ description: 'Null for the dynamic endpoint' })),
  description: Nullable(Type.String()),
  enabledEvents: Type.Array(Type.String()),
  legacyNotifications: Type.Boolean(),
  signatureCase: signatureCase(''),
  status: Type.Enum(endpointStatuses),
  health: Type.Enum(endpointHealths, {
    description:
      '`healthy`: its newest attempt succeeded (or none was made yet); `failing`: every attempt since ' +
      '`failingSince` has failed; `disabled`: it receives nothing (see `disabledReason`). An endpoint failing ' +
      'for TESSERA_ENDPOINT_DISABLE_AFTER_SECONDS (5 days), or answering HTTP 410, is disabled by Tessera.',
  }),
  failingSince: NullableField(
    Timestamp,
    'The first failed attempt since the last successful one; null while healthy (and after a re-enable)',
  ),
  lastError: NullableField(Type.String(), 'Why the newest failed attempt failed, while failing; null otherwise'),
  disabledReason: NullableField(
    Type.Enum(disabledReasons),
    '`failing`: disabled by Tessera after TESSERA_ENDPOINT_DISABLE_AFTER_SECONDS of nothing but failures; ' +
      '`gone`: disabled at once because the endpoint answered HTTP 410; null when enabled or disabled by a person',
  ),
  nextAttemptAt: NullableField(
    Timestamp,
    "The next attempt of the endpoint's earliest pending delivery; null when none",
  ),
  created: Timestamp,
};

/** The token is never part of this object: it is answered only by create, reveal_token and roll_token. */
export const WebhookEndpoint = Type.Object(endpointFields, { $id: 'WebhookEndpoint' });
export type WebhookEndpoint = Static<typeof WebhookEndpoint>;

const Token = Type.String({
  pattern: '^whsec_[A-Za-z0-9]{48}$',
  description:
    'The webhook token (SPEC §5.3): the HMAC-SHA256 key of the `Signature` header, used as the whole text, prefix included',
});

export const WebhookEndpointWithToken = Type.Object(
  { ...endpointFields, token: Token },
  { $id: 'WebhookEndpointWithToken' },
);
export type WebhookEndpointWithToken = Static<typeof WebhookEndpointWithToken>;

export const WebhookEndpointToken = Type.Object({ token: Token });
export type WebhookEndpointToken = Static<typeof WebhookEndpointToken>;

export const DeletedWebhookEndpoint = Type.Object({ id: Type.String(), deleted: Type.Boolean() });
