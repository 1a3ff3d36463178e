import { Type, type Static } from 'typebox';
import { ListQuery } from '../http/envelope.js';
import { CreatedFilters, Nullable, Timestamp } from '../core/common-schemas.js';
import { BalanceTransaction } from '../ledger/schemas.js';
import { disputeReasons, disputeStages, disputeStatuses } from './states.js';

/** docs/disputes.md, Evidence: the text fields. */
export const evidenceTextFields = [
  'productDescription',
  'customerName',
  'customerEmailAddress',
  'billingAddress',
  'shippingAddress',
  'shippingCarrier',
  'shippingTrackingNumber',
  'shippingDate',
  'refundPolicyDisclosure',
  'refundRefusalExplanation',
  'cancellationPolicyDisclosure',
  'duplicateChargeExplanation',
  'uncategorizedText',
] as const;

/** docs/disputes.md, Evidence: the file fields, each a file id (POST /files). */
export const evidenceFileFields = [
  'receipt',
  'customerCommunication',
  'shippingDocumentation',
  'refundPolicy',
  'cancellationPolicy',
  'serviceDocumentation',
  'uncategorizedFile',
] as const;

export type EvidenceFileField = (typeof evidenceFileFields)[number];
export type EvidenceField = (typeof evidenceTextFields)[number] | EvidenceFileField;
export type Evidence = Record<EvidenceField, string | null>;

/** All text fields of a dispute's evidence together (docs/disputes.md, Evidence). */
export const evidenceTextLimit = 150_000;

const textField = Type.String({ maxLength: evidenceTextLimit });
const fileField = Type.String({ maxLength: 64, description: 'A file id (file_…) of purpose dispute_evidence' });

/** In a request: each field optional; "" clears it. */
export const EvidenceInput = Type.Object(
  {
    ...Object.fromEntries(evidenceTextFields.map((field) => [field, Type.Optional(textField)])),
    ...Object.fromEntries(evidenceFileFields.map((field) => [field, Type.Optional(fileField)])),
  } as Record<EvidenceField, ReturnType<typeof Type.Optional<typeof textField>>>,
  { additionalProperties: false },
);
export type EvidenceInput = Partial<Record<EvidenceField, string>>;

export const EvidenceOut = Type.Object(
  Object.fromEntries(
    [...evidenceTextFields, ...evidenceFileFields].map((field) => [field, Nullable(Type.String())]),
  ) as Record<EvidenceField, ReturnType<typeof Nullable<ReturnType<typeof Type.String>>>>,
);

export const DisputeParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

export const UpdateDisputeBody = Type.Object(
  {
    evidence: Type.Optional(EvidenceInput),
    submit: Type.Optional(
      Type.Boolean({ description: 'true sends the evidence to the issuer; otherwise it is only staged' }),
    ),
  },
  { additionalProperties: false },
);
export type UpdateDisputeBody = { evidence?: EvidenceInput; submit?: boolean };

export const ListDisputesQuery = Type.Object(
  {
    ...ListQuery,
    paymentId: Type.Optional(Type.String({ maxLength: 64, description: 'Disputes of this payment (pt_…)' })),
    status: Type.Optional(Type.Enum(disputeStatuses)),
    ...CreatedFilters,
  },
  { additionalProperties: false },
);
export type ListDisputesQuery = Static<typeof ListDisputesQuery>;

export const Dispute = Type.Object(
  {
    id: Type.String({ pattern: '^dp_\\d{19}$' }),
    paymentId: Type.String(),
    amount: Type.String({ pattern: '^\\d+$', description: 'Minor units', examples: ['1999'] }),
    currency: Type.String({ pattern: '^[A-Z]{3}$' }),
    reason: Type.Enum(disputeReasons),
    networkReasonCode: Nullable(Type.String({ examples: ['10.4'] })),
    stage: Type.Enum(disputeStages),
    status: Type.Enum(disputeStatuses),
    evidence: EvidenceOut,
    evidenceDetails: Type.Object({
      dueBy: Timestamp,
      hasEvidence: Type.Boolean(),
      pastDue: Type.Boolean(),
      submissionCount: Type.Integer({ minimum: 0 }),
    }),
    isChargeRefundable: Type.Boolean({
      description: 'An open inquiry: refunding the payment is still possible (and ends the question)',
    }),
    balanceTransactions: Type.Array(BalanceTransaction),
    created: Timestamp,
  },
  { $id: 'Dispute' },
);
export type Dispute = Static<typeof Dispute>;
