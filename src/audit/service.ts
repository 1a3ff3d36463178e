import { containsCardNumber, maskCardNumbersInText } from '../card-numbers.js';
import type { Queryable } from '../db/db.js';
import * as queries from './queries.js';

/**
 * `tessera audit card-numbers` (docs/security.md, docs/decisions/0045-card-numbers-in-free-text.md):
 * every stored free-text value that holds a card number, masked to its last four digits, so that
 * rows written before the guard refused them can be found and cleaned.
 */
export interface CardNumberFinding {
  merchantId: string;
  mode: string;
  object: queries.AuditedObject;
  id: string;
  /** The field in the API's words: `lineItems[0].name`, `metadata.note`. */
  field: string;
  /** The stored text with each card number shown as its last four digits. */
  masked: string;
}

/**
 * Keys of stored JSON that are not free text: the merchant's own identifiers (exempt from the
 * guard) and the card as a payment used it (brand, last four, fingerprint).
 */
const notFreeText = new Set(['orderNo', 'merchantUserId', 'paymentMethodDetails']);

const maskedLengthLimit = 200;

function findingsIn(value: unknown, path: string, found: Array<{ field: string; masked: string }>): void {
  if (typeof value === 'string') {
    if (containsCardNumber(value))
      found.push({ field: path, masked: maskCardNumbersInText(value).slice(0, maskedLengthLimit) });
    return;
  }
  if (value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    value.forEach((child, index) => findingsIn(child, `${path}[${index}]`, found));
    return;
  }
  for (const [key, child] of Object.entries(value)) {
    if (notFreeText.has(key)) continue;
    const field = path ? `${path}.${key}` : key;
    if (containsCardNumber(key)) found.push({ field: path || 'key', masked: maskCardNumbersInText(key) });
    findingsIn(child, field, found);
  }
}

export async function findCardNumbersInFreeText(
  db: Queryable,
): Promise<{ data: CardNumberFinding[]; truncated: boolean }> {
  const rows = await queries.rowsWithLongDigitRuns(db);
  const perObject = new Map<string, number>();
  const data: CardNumberFinding[] = [];
  let truncated = false;
  for (const row of rows) {
    const seen = (perObject.get(row.object) ?? 0) + 1;
    perObject.set(row.object, seen);
    if (seen > queries.rowsPerObjectLimit) {
      truncated = true;
      continue;
    }
    const found: Array<{ field: string; masked: string }> = [];
    findingsIn(row.text, '', found);
    for (const finding of found) {
      data.push({ merchantId: row.merchant_id, mode: row.mode, object: row.object, id: row.id, ...finding });
    }
  }
  data.sort(
    (a, b) => a.merchantId.localeCompare(b.merchantId) || a.object.localeCompare(b.object) || a.id.localeCompare(b.id),
  );
  return { data, truncated };
}
