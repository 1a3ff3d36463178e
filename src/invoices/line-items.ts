/**
 * The pure rules of an invoice's contents: line items as sent → as stored, their total in minor
 * units (bigint, never a float: docs/api.md#responses), and the number prefix taken from a merchant's name.
 */
import { invalidField } from '../core/errors.js';
import { maxAmount, maxAmountDigits, parseAmount } from '../money.js';
import type { StoredLineItem } from './queries.js';
import type { CreateInvoiceBody } from './schemas.js';

type LineItemIn = CreateInvoiceBody['lineItems'][number];

/** Line items as stored (unit amounts as digits) and what they add up to. */
export function parseLineItems(items: readonly LineItemIn[]): { items: StoredLineItem[]; total: bigint } {
  let total = 0n;
  const stored = items.map((item, index) => {
    const amount = parseAmount(item.amount);
    if (amount === undefined) {
      throw invalidField(
        `lineItems[${index}].amount`,
        `lineItems[${index}].amount must be a string of digits (minor units) or a whole number, at most 12 digits`,
      );
    }
    // The schema admits only 1–1000000, as a number or as digits.
    const quantity = Number(item.quantity ?? 1);
    total += amount * BigInt(quantity);
    return { description: item.description, amount: amount.toString(), quantity };
  });
  if (total === 0n) {
    throw invalidField('lineItems', 'The line items must add up to more than 0', 'total');
  }
  if (total > maxAmount) {
    throw invalidField(
      'lineItems',
      `The line items add up to more than an amount can hold (${maxAmountDigits} digits of minor units)`,
      'total',
    );
  }
  return { items: stored, total };
}

/** quantity × amount of one stored line, in minor units. */
export function lineTotal(item: StoredLineItem): bigint {
  return BigInt(item.amount) * BigInt(item.quantity);
}

/** Metadata keys are 1–40 characters (values are checked by the schema); an empty object is none. */
export function parseMetadata(metadata: Record<string, string> | undefined): Record<string, string> | null {
  if (metadata === undefined) return null;
  for (const key of Object.keys(metadata)) {
    if (key.length === 0 || key.length > 40) {
      throw invalidField('metadata', 'metadata keys must be 1 to 40 characters', 'key');
    }
  }
  return Object.keys(metadata).length === 0 ? null : { ...metadata };
}

/**
 * The invoice-number prefix of a merchant: the letters and digits of the first word of its
 * name, upper case, at most 8 ("Acme Ltd" → ACME); INV when the name has none.
 */
export function numberPrefixOf(merchantName: string): string {
  const firstWord = merchantName.trim().split(/\s+/)[0] ?? '';
  const prefix = firstWord
    .normalize('NFKD')
    .replace(/[^A-Za-z0-9]/g, '')
    .toUpperCase()
    .slice(0, 8);
  return prefix === '' ? 'INV' : prefix;
}

/** ACME + 1 → ACME-0001; past 9999 the number simply grows (ACME-10000). */
export function formatInvoiceNumber(prefix: string, sequence: string): string {
  return `${prefix}-${sequence.padStart(4, '0')}`;
}
