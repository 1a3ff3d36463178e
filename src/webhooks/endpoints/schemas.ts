import { Type, type Static, type TSchema } from 'typebox';
import { ListQuery } from '../../http/envelope.js';
import { HttpUrl, Nullable, Timestamp } from '../../core/common-schemas.js';
import { disabledReasons, endpointHealths, endpointStatuses } from '../health/states.js';
import { signatureAlgorithms, webhookFormats } from '../signature.js';

/** Subscribes an endpoint to every event type, present and future. */
export const allEvents = '*';

export { endpointStatuses, type EndpointStatus } from '../health/states.js';

// docs/webhooks.md#endpoints-and-tokens: either name of a docs/webhooks.md#event-codes code, in any letter case, or '*'; stored (and answered) as
// docs/webhooks.md#event-codes writes the code. An unknown name is refused by the service with a "did you mean".
const enabledEvents = (defaultNote: string) =>
  Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
    minItems: 1,
    maxItems: 32,
    description:
      'Event codes of docs/webhooks.md#event-codes by either name (`payment.succeeded` or `endpoint_payment.payment_succeeded`), ' +
      'in any letter case, or `["*"]` for all; answered as docs/webhooks.md#event-codes writes them (e.g. `Invoice.sent`). Each ' +
      `event is sent as its endpoint_ notification (and the legacy kind when legacyNotifications is on).${defaultNote}`,
  });

const Description = Type.String({ maxLength: 500, description: 'May be empty' });
const legacyNotifications = (defaultNote: string) =>
  Type.Boolean({
    description:
      'Whether the legacy notification (plain event code, signed with the legacy key, docs/webhooks.md#what-is-sent) is also sent ' +
      `to this endpoint.${defaultNote}`,
  });

export const signatureCases = ['upper', 'lower'] as const;
const signatureCase = (defaultNote: string) =>
  Type.Enum(signatureCases, {
    description:
      "The letter case of the hex `Signature` header (docs/webhooks.md#what-is-sent): `upper` as the sample (docs/webhooks.md#what-is-sent) and the provider's " +
      "PHP SDK, `lower` for verifiers that compare case-sensitively with lower-case hex (the provider's Java SDK, " +
      `Webhook.constructEvent).${defaultNote}`,
  });

const format = (defaultNote: string) =>
  Type.Enum(webhookFormats, {
    description:
      'How notifications are signed (docs/webhooks.md#standard-webhooks-format): `moneycollect`, the `Request-Time` and `Signature` headers of ' +
      'docs/webhooks.md#what-is-sent; `standard`, Standard Webhooks (`webhook-id` = the event id, `webhook-timestamp` = Unix seconds, ' +
      '`webhook-signature` = `v1,` + base64 HMAC-SHA256 over `id.timestamp.body`), verifiable with any Standard ' +
      'Webhooks library. The token (`whsec_…`) is the same in both: a change of format keeps it. The legacy kind ' +
      `is always sent in the moneycollect format.${defaultNote}`,
  });

const signatureAlgorithm = (defaultNote: string) =>
  Type.Enum(signatureAlgorithms, {
    description:
      'Standard format only (docs/decisions/0026): `hmac-sha256` signs `v1,` + base64 HMAC-SHA256 with the ' +
      '`whsec_…` token; `ed25519` signs `v1a,` + base64 ed25519 with a key pair whose secret half Tessera keeps ' +
      "(vault-encrypted, never shown) and whose public half `whpk_…` is the endpoint's `publicKey` and what " +
      `create, reveal_token and roll_token answer as \`token\`.${defaultNote}`,
  });

export const CreateWebhookEndpointBody = Type.Object(
  {
    url: HttpUrl,
    description: Type.Optional(Description),
    enabledEvents: Type.Optional(enabledEvents(' Default `["*"]`.')),
    legacyNotifications: Type.Optional(
      legacyNotifications(
        ' Default false (docs/decisions/0014-legacy-opt-in-and-sequence.md: opt-in; endpoints created before that change keep the value they had).',
      ),
    ),
    signatureCase: Type.Optional(signatureCase(' Default `upper`.')),
    format: Type.Optional(format(' Default `moneycollect`.')),
    signatureAlgorithm: Type.Optional(
      signatureAlgorithm(' Default `hmac-sha256`; changed afterwards by roll_token {signatureAlgorithm}.'),
    ),
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
    format: Type.Optional(format('')),
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
  format: format(''),
  signatureAlgorithm: signatureAlgorithm(''),
  publicKey: NullableField(
    Type.String({ pattern: '^whpk_[A-Za-z0-9+/]{43}=$' }),
    'ed25519 endpoints: the public key (`whpk_` + base64 of its 32 bytes) that verifies their `v1a,` signatures; ' +
      'null for hmac-sha256',
  ),
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
  pattern: '^(whsec_[A-Za-z0-9]{48}|whpk_[A-Za-z0-9+/]{43}=)$',
  description:
    'The webhook token (docs/webhooks.md#endpoints-and-tokens): the HMAC-SHA256 key of the `Signature` header, used as the whole text, prefix ' +
    'included. For an ed25519 endpoint (docs/decisions/0026), its public key `whpk_…`: the secret key is never shown',
});

export const WebhookEndpointWithToken = Type.Object(
  { ...endpointFields, token: Token },
  { $id: 'WebhookEndpointWithToken' },
);
export type WebhookEndpointWithToken = Static<typeof WebhookEndpointWithToken>;

export const WebhookEndpointToken = Type.Object({ token: Token });
export type WebhookEndpointToken = Static<typeof WebhookEndpointToken>;

/** docs/webhooks.md#standard-webhooks-format: a roll may keep the old token signing beside the new one for up to 24 hours. */
export const maxRollGraceSeconds = 24 * 60 * 60;

export const RollTokenBody = Type.Object(
  {
    expiresInSeconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: maxRollGraceSeconds,
        description:
          'Standard format only: the old token keeps signing, beside the new one (two `v1,` signatures in ' +
          '`webhook-signature`), for this many seconds (at most 86400, 24 h), so receivers can switch without ' +
          'losing a notification. Default 0: the old token stops at once.',
      }),
    ),
    signatureAlgorithm: Type.Optional(
      signatureAlgorithm(
        " Default: the endpoint's current one. With expiresInSeconds, the old key keeps signing in its own " +
          'algorithm meanwhile (`v1,<hmac> v1a,<ed25519>`), so receivers can move from one to the other.',
      ),
    ),
  },
  { additionalProperties: false },
);
export type RollTokenBody = Static<typeof RollTokenBody>;

export const RolledWebhookEndpointToken = Type.Object({
  token: Token,
  previousTokenExpiresAt: Nullable(
    Type.String({
      description: 'Until when the replaced token still signs (expiresInSeconds); null when it stopped at once',
    }),
  ),
});
export type RolledWebhookEndpointToken = Static<typeof RolledWebhookEndpointToken>;

export const DeletedWebhookEndpoint = Type.Object({ id: Type.String(), deleted: Type.Boolean() });
