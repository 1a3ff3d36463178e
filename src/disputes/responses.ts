/**
 * A live dispute's response sent to its processor (docs/disputes.md, Live; decision 0044): the
 * evidence (text and files) with submit, or the acceptance. Called outside any transaction, after
 * the dispute was marked as sending; the caller records the outcome.
 */
import type { Db } from '../db/db.js';
import { DomainError, invalidField } from '../core/errors.js';
import type { ProcessorRegistry } from '../processor-accounts/connectors.js';
import { EvidenceRefused, type DisputeResponseRequest } from '../processor/processor.js';
import * as queries from './queries.js';
import { evidenceFileFields, evidenceTextFields } from './schemas.js';

/**
 * The idempotency key of a response: the same on every retry of it, since the submission count
 * only grows in the transaction that records the processor's answer.
 */
export const responseKey = (row: queries.DisputeRow, kind: 'submit' | 'accept') =>
  `${row.id}.${kind}.${row.submission_count + 1}`;

export async function sendResponse(
  deps: { db: Db; processors: ProcessorRegistry },
  row: queries.DisputeRow,
  kind: 'submit' | 'accept',
): Promise<void> {
  const account = await deps.processors.account(row.processor_account_id!);
  if (!account) throw new Error(`Processor account ${row.processor_account_id} of dispute ${row.id} is missing`);
  const { connector } = account;
  const request: DisputeResponseRequest = {
    disputeId: row.id,
    disputeReference: row.processor_response_reference ?? row.processor_reference!,
    idempotencyKey: responseKey(row, kind),
  };
  try {
    if (kind === 'accept') {
      await connector.acceptDispute(request);
      return;
    }
    const text: Record<string, string> = {};
    for (const field of evidenceTextFields) {
      const value = row.evidence[field];
      if (value !== null && value !== undefined) text[field] = value;
    }
    const named = evidenceFileFields.filter((field) => row.evidence[field]);
    const stored = new Map(
      (
        await queries.selectEvidenceFiles(
          deps.db,
          named.map((field) => row.evidence[field]!),
        )
      ).map((file) => [file.id, file]),
    );
    const files = named.map((field) => {
      const file = stored.get(row.evidence[field]!)!;
      return { field, fileId: file.id, filename: file.filename, type: file.type, contents: Buffer.from(file.contents) };
    });
    await connector.submitDisputeEvidence({ ...request, text, files });
  } catch (caught) {
    if (caught instanceof EvidenceRefused) throw invalidField(caught.field, caught.message, 'processor');
    const what = kind === 'accept' ? 'acceptance' : 'evidence';
    throw new DomainError(
      'processor_error',
      `${connector.name} did not take the dispute's ${what} (${caught instanceof Error ? caught.message : 'no answer'}); the dispute is unchanged: send the same request again`,
      { param: 'id', processor: connector.name },
    );
  }
}
