import { Type, type Static } from 'typebox';

export const DoctorBody = Type.Object(
  {
    headers: Type.Union(
      [
        Type.String({ maxLength: 65_536, description: 'The request headers as raw text, one `Name: value` a line' }),
        Type.Record(Type.String(), Type.Union([Type.String(), Type.Array(Type.String())]), {
          description: 'The request headers as an object, names as your framework gave them',
        }),
      ],
      { description: 'The headers of the notification as your receiver got them' },
    ),
    body: Type.String({ maxLength: 1_000_000, description: 'The body exactly as your receiver got it (raw text)' }),
    token: Type.Optional(
      Type.String({
        maxLength: 200,
        description:
          "The token your receiver verifies with (`whsec_…`, or an ed25519 endpoint's public key `whpk_…`). Never " +
          'echoed. Without it, the endpoint tokens are tried.',
      }),
    ),
    endpointId: Type.Optional(
      Type.String({ maxLength: 64, description: 'The endpoint the notification was meant for (we_…)' }),
    ),
  },
  { additionalProperties: false },
);
export type DoctorBody = Static<typeof DoctorBody>;

export const doctorCodes = [
  'verifies',
  'header_missing',
  'header_case',
  'malformed_request_time',
  'malformed_signature',
  'clock_skew',
  'hex_case',
  'body_changed',
  'wrong_token',
  'legacy_kind',
  'no_key_matches',
  'rolled_tokens_not_kept',
  'malformed_webhook_timestamp',
  'signature_list',
  'secret_prefix',
  'wrong_algorithm',
] as const;
export type DoctorCode = (typeof doctorCodes)[number];

export const DoctorFinding = Type.Object({
  code: Type.Enum(doctorCodes),
  severity: Type.Enum(['ok', 'problem', 'warning', 'info'] as const, {
    description: '`problem`: a reason the signature does not verify; `warning`: verifies, but some verifiers fail',
  }),
  message: Type.String(),
  position: Type.Optional(Type.Integer({ description: 'body_changed: the first differing character (0-based)' })),
  received: Type.Optional(Type.String({ description: 'body_changed: the received body around that position' })),
  sent: Type.Optional(Type.String({ description: 'body_changed: what Tessera signed around that position' })),
});
export type DoctorFinding = Static<typeof DoctorFinding>;

export const DoctorReport = Type.Object({
  verifies: Type.Boolean({
    description:
      'True when the signature verifies and Request-Time is within 3 minutes (standard format: webhook-timestamp within 5)',
  }),
  findings: Type.Array(DoctorFinding),
});
export type DoctorReport = Static<typeof DoctorReport>;
