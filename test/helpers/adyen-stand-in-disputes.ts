/**
 * The Disputes API v30 of the Adyen stand-in (docs/processors-adyen.md, Disputes): its four
 * operations at `<stand-in>/ca/services/DisputeService/v30/<operation>`, answered as Adyen's
 * published description says, remembering what each dispute was sent.
 */

export const disputeServicePrefix = '/ca/services/DisputeService/v30';

export const disputeOperations = [
  'retrieveApplicableDefenseReasons',
  'supplyDefenseDocument',
  'defendDispute',
  'acceptDispute',
] as const;
export type DisputeOperation = (typeof disputeOperations)[number];

/** Adyen's example of applicable defense reasons (DisputeService-v30, retrieveApplicableDefenseReasons). */
const defenseReasons = [
  {
    defenseReasonCode: 'GoodsWereAsDescribed',
    satisfied: false,
    defenseDocumentTypes: [
      { available: false, defenseDocumentTypeCode: 'GoodsWereAsDescribed', requirementLevel: 'Required' },
      { available: false, defenseDocumentTypeCode: 'TIDorInvoice', requirementLevel: 'Required' },
    ],
  },
  {
    defenseReasonCode: 'SupplyDefenseMaterial',
    satisfied: false,
    defenseDocumentTypes: [
      { available: false, defenseDocumentTypeCode: 'TIDorInvoice', requirementLevel: 'Optional' },
      { available: false, defenseDocumentTypeCode: 'DefenseMaterial', requirementLevel: 'Required' },
    ],
  },
];

/** The operation of a Disputes API path, or null for any other path. */
export function disputeOperationOf(path: string): DisputeOperation | null {
  if (!path.startsWith(`${disputeServicePrefix}/`)) return null;
  const name = path.slice(disputeServicePrefix.length + 1);
  return (disputeOperations as readonly string[]).includes(name) ? (name as DisputeOperation) : null;
}

export interface DisputeDesk {
  /** What each dispute (its disputePspReference) was sent: documents, defense reason, accepted. */
  disputes: Map<string, { documents: Array<Record<string, unknown>>; defendedWith: string | null; accepted: boolean }>;
  perform(
    operation: DisputeOperation,
    body: Record<string, unknown>,
  ): { status: number; answer: Record<string, unknown> };
}

export function createDisputeDesk(merchantAccount: string): DisputeDesk {
  const disputes: DisputeDesk['disputes'] = new Map();
  const ok = { disputeServiceResult: { success: true } };
  return {
    disputes,
    perform(operation, body) {
      const reference = String(body.disputePspReference ?? '');
      if (body.merchantAccountCode !== merchantAccount || reference === '') {
        return {
          status: 422,
          answer: { status: 422, errorCode: '000', message: 'Invalid dispute request', errorType: 'validation' },
        };
      }
      const dispute = disputes.get(reference) ?? { documents: [], defendedWith: null, accepted: false };
      disputes.set(reference, dispute);
      const closed = {
        disputeServiceResult: { success: false, errorMessage: 'Dispute is already defended or accepted' },
      };
      switch (operation) {
        case 'retrieveApplicableDefenseReasons':
          return { status: 200, answer: { ...ok, defenseReasons } };
        case 'supplyDefenseDocument':
          dispute.documents.push(...((body.defenseDocuments ?? []) as Array<Record<string, unknown>>));
          return { status: 200, answer: ok };
        case 'defendDispute':
          if (dispute.defendedWith !== null || dispute.accepted) return { status: 200, answer: closed };
          dispute.defendedWith = String(body.defenseReasonCode);
          return { status: 200, answer: ok };
        case 'acceptDispute':
          if (dispute.defendedWith !== null || dispute.accepted) return { status: 200, answer: closed };
          dispute.accepted = true;
          return { status: 200, answer: ok };
      }
    },
  };
}
