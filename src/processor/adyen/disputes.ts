/**
 * Answers to Adyen disputes through its Disputes API v30, a service apart from Checkout
 * (docs/processors-adyen.md, Disputes): accept, or supply the evidence files as defense documents
 * and defend with the defense reason Adyen lists for the dispute.
 */

import { EvidenceRefused, type DisputeResponseRequest, type SubmitDisputeEvidenceRequest } from '../processor.js';
import { AdyenRequestFailed, type AdyenAnswer, type AdyenClient } from './client.js';

/** The generic defense: any material, under the reason Adyen offers for most disputes. */
const preferredReason = 'SupplyDefenseMaterial';
const preferredDocumentType = 'DefenseMaterial';

/** Adyen takes PDF and JPEG documents (and TIFF, which Tessera does not keep). */
const contentTypes: Record<string, string | undefined> = { pdf: 'application/pdf', jpg: 'image/jpeg' };

/** Adyen answers 200 with `disputeServiceResult.success` false when it refuses. */
function succeeded(answer: AdyenAnswer, operation: string): AdyenAnswer {
  const result = answer.disputeServiceResult as { success?: unknown } | undefined;
  if (result?.success !== true) {
    // errorMessage is not kept: it may quote the request.
    throw new AdyenRequestFailed(`Adyen POST /${operation} answered success false`, 200, null);
  }
  return answer;
}

interface DefenseReason {
  defenseReasonCode: string;
  defenseDocumentTypes?: Array<{ defenseDocumentTypeCode: string; requirementLevel?: string }>;
}

/** The reason and document type to defend with: the generic ones when offered, else Adyen's first. */
export function defenseOf(answer: AdyenAnswer): { reason: string; documentType: string } {
  const reasons = (Array.isArray(answer.defenseReasons) ? answer.defenseReasons : []) as DefenseReason[];
  const reason = reasons.find((entry) => entry.defenseReasonCode === preferredReason) ?? reasons[0];
  if (!reason) throw new AdyenRequestFailed('Adyen lists no defense reason for the dispute', 200, null);
  const types = reason.defenseDocumentTypes ?? [];
  const type =
    types.find((entry) => entry.defenseDocumentTypeCode === preferredDocumentType) ??
    types.find((entry) => entry.requirementLevel === 'Required') ??
    types[0];
  return { reason: reason.defenseReasonCode, documentType: type?.defenseDocumentTypeCode ?? preferredDocumentType };
}

export function createAdyenDisputes(client: AdyenClient, merchantAccountCode: string) {
  const of = (request: DisputeResponseRequest) => ({
    disputePspReference: request.disputeReference,
    merchantAccountCode,
  });
  return {
    async submit(request: SubmitDisputeEvidenceRequest): Promise<void> {
      // Adyen takes documents only: the text fields are not sent (docs/processors-adyen.md, Disputes).
      if (request.files.length === 0) {
        throw new EvidenceRefused(
          'evidence',
          'An Adyen dispute is defended with documents: name at least one PDF or JPEG evidence file',
        );
      }
      for (const file of request.files) {
        if (contentTypes[file.type] === undefined) {
          throw new EvidenceRefused(
            `evidence.${file.field}`,
            `evidence.${file.field} is a ${file.type.toUpperCase()} file; Adyen takes PDF or JPEG documents only`,
          );
        }
      }
      const reasons = succeeded(
        await client.post('/retrieveApplicableDefenseReasons', of(request), `${request.idempotencyKey}.reasons`),
        'retrieveApplicableDefenseReasons',
      );
      const defense = defenseOf(reasons);
      succeeded(
        await client.post(
          '/supplyDefenseDocument',
          {
            ...of(request),
            defenseDocuments: request.files.map((file) => ({
              content: file.contents.toString('base64'),
              contentType: contentTypes[file.type]!,
              defenseDocumentTypeCode: defense.documentType,
            })),
          },
          `${request.idempotencyKey}.documents`,
        ),
        'supplyDefenseDocument',
      );
      succeeded(
        await client.post(
          '/defendDispute',
          { ...of(request), defenseReasonCode: defense.reason },
          request.idempotencyKey,
        ),
        'defendDispute',
      );
    },

    async accept(request: DisputeResponseRequest): Promise<void> {
      succeeded(await client.post('/acceptDispute', of(request), request.idempotencyKey), 'acceptDispute');
    },
  };
}
