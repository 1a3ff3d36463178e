import type { Queryable } from '../db/db.js';

/**
 * The stored free text of each kind of object, as one JSON object per row whose keys are the API's
 * field names (docs/decisions/0045-card-numbers-in-free-text.md). Identifiers the merchant owns
 * (orderNo, merchantUserId) are left out here or skipped by the walk (service.ts).
 */
const freeTextSources = [
  { object: 'payment', table: 'payments', text: 'details' },
  {
    object: 'customer',
    table: 'customers',
    text: `jsonb_build_object('firstName', first_name, 'lastName', last_name, 'description', description,
      'address', address, 'shipping', shipping)`,
  },
  {
    object: 'refund',
    table: 'refunds',
    text: `jsonb_build_object('note', note, 'description', description, 'metadata', metadata)`,
  },
  {
    object: 'invoice',
    table: 'invoices',
    text: `jsonb_build_object('lineItems', line_items, 'description', description, 'metadata', metadata)`,
  },
  { object: 'checkout_session', table: 'checkout_sessions', text: 'details' },
  { object: 'payment_method', table: 'payment_methods', text: `jsonb_build_object('billingDetails', billing_details)` },
  { object: 'webhook_endpoint', table: 'webhook_endpoints', text: `jsonb_build_object('description', description)` },
] as const;

export type AuditedObject = (typeof freeTextSources)[number]['object'];

export interface FreeTextRow {
  object: AuditedObject;
  id: string;
  merchant_id: string;
  mode: string;
  text: unknown;
}

/** At most this many rows of each kind are read; the answer says when there were more. */
export const rowsPerObjectLimit = 1000;

/**
 * Rows whose free text holds 13 digits in a row, separators aside: a scan of every row (an audit
 * runs rarely), and the exact rule (brand prefix, Luhn) is applied to what it finds.
 */
export async function rowsWithLongDigitRuns(db: Queryable): Promise<FreeTextRow[]> {
  const rows: FreeTextRow[] = [];
  for (const source of freeTextSources) {
    const found = await db.query<Omit<FreeTextRow, 'object'>>(
      `SELECT id, merchant_id, mode, text FROM (SELECT id, merchant_id, mode, ${source.text} AS text FROM ${source.table}) AS t
        WHERE text::text ~ '[0-9]([ -]?[0-9]){12}'
        ORDER BY merchant_id, id
        LIMIT ${rowsPerObjectLimit + 1}`,
    );
    rows.push(...found.map((row) => ({ ...row, object: source.object })));
  }
  return rows;
}
