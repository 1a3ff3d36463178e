/**
 * Files and disputes of the Stripe stand-in (docs/processors-stripe.md, Disputes): `POST /v1/files`
 * as the `stripe` client sends it (multipart/form-data: purpose, and file with its name and type),
 * `POST /v1/disputes/:id` (evidence, submit) and `POST /v1/disputes/:id/close`, remembering what
 * each dispute was sent.
 */

import { createHash, randomBytes } from 'node:crypto';
import type { Params } from './stripe-stand-in-params.js';

export interface UploadedFile {
  id: string;
  purpose: string;
  filename: string;
  type: string;
  data: Buffer;
}

export interface DisputeRecord {
  /** Every evidence update the stand-in performed (not replays), with its submit flag. */
  updates: Array<{ evidence: Record<string, string>; submit: boolean; idempotencyKey: string | null }>;
  closes: Array<{ idempotencyKey: string | null }>;
  status: string;
}

/** A multipart body's fields: text fields as strings, file fields with their name, type and bytes. */
export function parseMultipart(
  contentType: string,
  body: Buffer,
): Record<string, string | { name: string; type: string; data: Buffer }> {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(contentType);
  if (!boundary) throw new Error('multipart without boundary');
  const delimiter = Buffer.from(`--${boundary[1] ?? boundary[2]}`);
  const fields: ReturnType<typeof parseMultipart> = {};
  let at = body.indexOf(delimiter);
  while (at !== -1) {
    const start = at + delimiter.length;
    if (body.subarray(start, start + 2).toString() === '--') break;
    const next = body.indexOf(delimiter, start);
    if (next === -1) break;
    const part = body.subarray(start + 2, next - 2);
    const split = part.indexOf('\r\n\r\n');
    const head = part.subarray(0, split).toString('utf8');
    const content = part.subarray(split + 4);
    const name = /name="([^"]*)"/.exec(head)?.[1] ?? '';
    const filename = /filename="([^"]*)"/.exec(head)?.[1];
    const type = /content-type:\s*(\S+)/i.exec(head)?.[1] ?? 'application/octet-stream';
    fields[name] =
      filename === undefined ? content.toString('utf8') : { name: filename, type, data: Buffer.from(content) };
    at = next;
  }
  return fields;
}

/** What identifies a multipart request for idempotency: its fields, not its random boundary. */
export function multipartFingerprint(path: string, fields: ReturnType<typeof parseMultipart>): string {
  const described = Object.entries(fields).map(([name, value]) =>
    typeof value === 'string'
      ? [name, value]
      : [name, value.name, value.type, createHash('sha256').update(value.data).digest('hex')],
  );
  return createHash('sha256')
    .update(`POST ${path} ${JSON.stringify(described)}`)
    .digest('hex');
}

export class StripeStandInDisputes {
  readonly files = new Map<string, UploadedFile>();
  readonly disputes = new Map<string, DisputeRecord>();

  private record(id: string): DisputeRecord {
    const known = this.disputes.get(id) ?? { updates: [], closes: [], status: 'needs_response' };
    this.disputes.set(id, known);
    return known;
  }

  createFile(fields: ReturnType<typeof parseMultipart>): { status: number; body: unknown } {
    const file = fields.file;
    if (fields.purpose !== 'dispute_evidence' || file === undefined || typeof file === 'string') {
      return {
        status: 400,
        body: { error: { type: 'invalid_request_error', message: 'purpose and file are required' } },
      };
    }
    const id = `file_${randomBytes(12).toString('hex')}`;
    this.files.set(id, { id, purpose: fields.purpose, filename: file.name, type: file.type, data: file.data });
    return {
      status: 200,
      body: {
        id,
        object: 'file',
        purpose: fields.purpose,
        filename: file.name,
        size: file.data.length,
        type: file.type.split('/')[1],
      },
    };
  }

  /** POST /v1/disputes/:id and /v1/disputes/:id/close; null for any other path. */
  execute(path: string, params: Params, key: string | null): { status: number; body: unknown } | null {
    const match = /^\/v1\/disputes\/([\w]+)(\/close)?$/.exec(path);
    if (!match) return null;
    const dispute = this.record(match[1]!);
    const closed = dispute.status === 'lost' || dispute.status === 'under_review';
    if (closed) {
      return {
        status: 400,
        body: { error: { type: 'invalid_request_error', message: `This dispute is ${dispute.status}` } },
      };
    }
    if (match[2] !== undefined) {
      dispute.closes.push({ idempotencyKey: key });
      dispute.status = 'lost';
    } else {
      const evidence = (params.evidence ?? {}) as Record<string, string>;
      for (const [field, value] of Object.entries(evidence)) {
        if (
          /^(receipt|customer_communication|shipping_documentation|refund_policy|cancellation_policy|service_documentation|uncategorized_file)$/.test(
            field,
          ) &&
          !this.files.has(value)
        ) {
          return {
            status: 400,
            body: {
              error: {
                type: 'invalid_request_error',
                message: `No such file upload: '${value}'`,
                param: `evidence[${field}]`,
              },
            },
          };
        }
      }
      const submit = params.submit === 'true';
      dispute.updates.push({ evidence, submit, idempotencyKey: key });
      if (submit) dispute.status = 'under_review';
    }
    return { status: 200, body: { id: match[1], object: 'dispute', status: dispute.status } };
  }
}
