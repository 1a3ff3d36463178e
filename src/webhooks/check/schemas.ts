import { Type, type Static } from 'typebox';
import { ListQuery } from '../../http/envelope.js';
import { HttpUrl, Timestamp } from '../../core/common-schemas.js';
import { SendingAddresses } from '../egress/sending-addresses.js';

/** The cases of a go-live check, in the order they are sent (docs/webhooks.md#go-live-check, issue 12). */
export const checkCaseNames = [
  'valid',
  'duplicate',
  'bad_signature',
  'stale_request_time',
  'future_request_time',
  'changed_body',
  'legacy_kind',
  'within_timeout',
] as const;
export type CheckCaseName = (typeof checkCaseNames)[number];

export const RunCheckBody = Type.Object(
  {
    url: Type.Optional({
      ...HttpUrl,
      description:
        "Where to send the test deliveries instead of the endpoint's url. Required for the dynamic endpoint " +
        '(it has no url of its own: give the notifyUrl your payments use). Checked by the same address rules as ' +
        'an endpoint url (production refuses private addresses).',
    }),
  },
  { additionalProperties: false },
);
export type RunCheckBody = Static<typeof RunCheckBody>;

export const WebhookCheckCase = Type.Object({
  name: Type.Enum(checkCaseNames, {
    description:
      '`valid` and `duplicate` must be answered `success`; `bad_signature`, `stale_request_time` (4 minutes old), ' +
      '`future_request_time` (4 minutes ahead), `changed_body` (a field altered after signing) and `legacy_kind` ' +
      '(signed with the legacy key) must not; `within_timeout`: every test delivery was answered in time.',
  }),
  passed: Type.Boolean(),
  reason: Type.String({ description: 'Why the case passed or failed, in a sentence' }),
  httpStatus: Type.Union([Type.Integer(), Type.Null()], { description: 'null when no HTTP answer came' }),
  latencyMs: Type.Integer({ description: 'Time from sending to the full answer (or to the error)' }),
});
export type WebhookCheckCase = Static<typeof WebhookCheckCase>;

export const WebhookCheck = Type.Object({
  id: Type.String({ pattern: '^whc_\\d{19}$' }),
  endpointId: Type.String({ pattern: '^we_\\d{19}$' }),
  url: Type.String({ description: 'Where the test deliveries went' }),
  passed: Type.Boolean({ description: 'True when every case passed: the endpoint is ready to go live' }),
  cases: Type.Array(WebhookCheckCase),
  created: Timestamp,
  sendingAddresses: SendingAddresses,
});
export type WebhookCheck = Static<typeof WebhookCheck>;

export const ListChecksQuery = Type.Object({ ...ListQuery }, { additionalProperties: false });
export type ListChecksQuery = Static<typeof ListChecksQuery>;
