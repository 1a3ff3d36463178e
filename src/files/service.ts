/**
 * Files merchants upload as dispute evidence (docs/disputes.md, Evidence files): the type found
 * from the bytes, at most 5 MB, kept in the database outside the vault and served only to the
 * merchant (and mode) that uploaded them.
 */
import type { Clock } from '../clock.js';
import type { Db, Queryable } from '../db/db.js';
import type { MerchantContext } from '../core/merchant-context.js';
import { DomainError, invalidField, notFound } from '../core/errors.js';
import { newId } from '../ids.js';
import { maxFileBytes, type FileObject, type FileType } from './schemas.js';

type MerchantScope = Pick<MerchantContext, 'merchantId' | 'mode'>;

interface FileRow {
  id: string;
  purpose: 'dispute_evidence';
  type: FileType;
  size: number;
  filename: string;
}

/** The type by the file's first bytes (its magic number); undefined for anything else. */
export function sniffType(bytes: Buffer): FileType | undefined {
  if (bytes.subarray(0, 5).toString('latin1') === '%PDF-') return 'pdf';
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'png';
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpg';
  return undefined;
}

export const tooLarge = () =>
  new DomainError('invalid_request', `file must be at most 5 MB (${maxFileBytes} bytes)`, {
    param: 'file',
    rule: 'max_size',
    limit: maxFileBytes,
  });

/**
 * The type of an evidence file's bytes, or the refusal (empty, over 5 MB, not PDF/PNG/JPEG); the
 * dashboard checks every file of a form with it before it stores any (docs/disputes.md, Evidence files).
 */
export function checkedType(bytes: Buffer): FileType {
  if (bytes.length === 0) throw invalidField('file', 'file must not be empty', 'required');
  if (bytes.length > maxFileBytes) throw tooLarge();
  const type = sniffType(bytes);
  if (type === undefined) {
    throw new DomainError('invalid_request', 'file must be a PDF, PNG or JPEG (judged by its bytes)', {
      param: 'file',
      rule: 'file_type',
    });
  }
  return type;
}

const toFile = (row: FileRow): FileObject => ({
  id: row.id,
  purpose: row.purpose,
  type: row.type,
  size: row.size,
  filename: row.filename,
});

export const contentTypes: Record<FileType, string> = { pdf: 'application/pdf', png: 'image/png', jpg: 'image/jpeg' };

export function createFileService({ db, clock }: { db: Db; clock: Clock }) {
  return {
    /** `source`: a transaction to store the file in (the dashboard's evidence form), else the pool. */
    async create(
      merchant: MerchantScope,
      input: { purpose: string | undefined; filename: string; bytes: Buffer },
      source: Queryable = db,
    ): Promise<FileObject> {
      if (input.purpose !== 'dispute_evidence') {
        throw invalidField('purpose', 'purpose must be dispute_evidence', 'enum');
      }
      const type = checkedType(input.bytes);
      const row: FileRow = {
        id: newId('file'),
        purpose: 'dispute_evidence',
        type,
        size: input.bytes.length,
        filename: input.filename.slice(0, 255),
      };
      await source.query(
        `INSERT INTO files (id, merchant_id, mode, purpose, type, size, filename, contents, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [
          row.id,
          merchant.merchantId,
          merchant.mode,
          row.purpose,
          row.type,
          row.size,
          row.filename,
          input.bytes,
          clock.now(),
        ],
      );
      return toFile(row);
    },

    async retrieve(merchant: MerchantScope, id: string): Promise<FileObject> {
      const [row] = await db.query<FileRow>(
        'SELECT id, purpose, type, size, filename FROM files WHERE id = $1 AND merchant_id = $2 AND mode = $3',
        [id, merchant.merchantId, merchant.mode],
      );
      if (!row) throw notFound('file', id);
      return toFile(row);
    },

    /** The bytes, only to the merchant and mode that uploaded them (404 to anyone else). */
    async contents(merchant: MerchantScope, id: string): Promise<{ file: FileObject; bytes: Buffer }> {
      const [row] = await db.query<FileRow & { contents: Uint8Array }>(
        'SELECT id, purpose, type, size, filename, contents FROM files WHERE id = $1 AND merchant_id = $2 AND mode = $3',
        [id, merchant.merchantId, merchant.mode],
      );
      if (!row) throw notFound('file', id);
      return { file: toFile(row), bytes: Buffer.from(row.contents) };
    },
  };
}

export type FileService = ReturnType<typeof createFileService>;
