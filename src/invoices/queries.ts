import { ownRowCondition, selectOwnRowById } from '../db/by-id.js';
import type { Queryable } from '../db/db.js';
import {
  countByStatus,
  listFilter,
  selectPage,
  type PageRequest,
  type CreatedRange,
  type StatusCounts,
} from '../db/pagination.js';
import type { CollectionMethod } from './schemas.js';
import type { Transition } from '../state-table.js';
import type { InvoiceStatus } from './states.js';

/** A line item as stored: the unit amount as digits, so that money never passes through a float. */
export interface StoredLineItem {
  description: string;
  amount: string;
  quantity: number;
}

export interface InvoiceRow {
  id: string;
  merchant_id: string;
  mode: string;
  customer_id: string;
  currency: string;
  line_items: StoredLineItem[];
  number: string | null;
  /** bigint columns arrive as text from both drivers. */
  amount_due: string;
  amount_paid: string;
  amount_remaining: string;
  collection_method: CollectionMethod;
  days_until_due: number | null;
  due_date: Date | null;
  payment_method_id: string | null;
  description: string | null;
  metadata: Record<string, string> | null;
  status: InvoiceStatus;
  payment_id: string | null;
  pending_payment_id: string | null;
  attempt_count: number;
  next_payment_attempt: Date | null;
  last_error_code: string | null;
  last_error_message: string | null;
  finalized_at: Date | null;
  paid_at: Date | null;
  voided_at: Date | null;
  marked_uncollectible_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const columnList = [
  'id',
  'merchant_id',
  'mode',
  'customer_id',
  'currency',
  'line_items',
  'number',
  'amount_due',
  'amount_paid',
  'amount_remaining',
  'collection_method',
  'days_until_due',
  'due_date',
  'payment_method_id',
  'description',
  'metadata',
  'status',
  'payment_id',
  'pending_payment_id',
  'attempt_count',
  'next_payment_attempt',
  'last_error_code',
  'last_error_message',
  'finalized_at',
  'paid_at',
  'voided_at',
  'marked_uncollectible_at',
  'created_at',
  'updated_at',
] as const satisfies ReadonlyArray<keyof InvoiceRow>;
const columns = columnList.join(', ');

const jsonColumns = new Set<string>(['line_items', 'metadata']);
const encode = (column: string, value: unknown) =>
  value === null || !jsonColumns.has(column) ? value : JSON.stringify(value);

export async function insertInvoice(db: Queryable, row: InvoiceRow): Promise<void> {
  const placeholders = columnList.map((_, index) => `$${index + 1}`).join(', ');
  await db.execute(
    `INSERT INTO invoices (${columns}) VALUES (${placeholders})`,
    columnList.map((column) => encode(column, row[column])),
  );
}

export async function selectInvoice(
  db: Queryable,
  merchantId: string,
  mode: string,
  id: string,
): Promise<InvoiceRow | undefined> {
  const [row] = await db.query<InvoiceRow>(selectOwnRowById('invoices', columns), [id, merchantId, mode]);
  return row;
}

/** For jobs, the hosted page and the payment hook, which act on an invoice id without a key. */
export async function selectInvoiceById(db: Queryable, id: string): Promise<InvoiceRow | undefined> {
  const [row] = await db.query<InvoiceRow>(`SELECT ${columns} FROM invoices WHERE id = $1`, [id]);
  return row;
}

/**
 * The invoice, locked until the transaction ends: the payment hook and a failed attempt read its
 * attempt count and write the next one, which no other change may interleave with.
 */
export async function selectInvoiceForUpdate(tx: Queryable, id: string): Promise<InvoiceRow | undefined> {
  const [row] = await tx.query<InvoiceRow>(`SELECT ${columns} FROM invoices WHERE id = $1 FOR UPDATE`, [id]);
  return row;
}

/** Columns a change may write; the status only through a Transition, the rest are fixed at creation. */
export type InvoiceChanges = Partial<
  Omit<InvoiceRow, 'id' | 'merchant_id' | 'mode' | 'status' | 'created_at' | 'updated_at'>
>;

const writable = new Set<string>(
  columnList.filter((column) => !['id', 'merchant_id', 'mode', 'status', 'created_at', 'updated_at'].includes(column)),
);

/**
 * The one way an invoice changes, and the only writer of its status: only while its status is one
 * of `move.from` (a Transition of states.ts), and, with `pending`, only while its pending payment
 * is that one (null: none). Zero rows means another request or job changed it first; the caller
 * reloads and never overwrites that change.
 */
export async function changeInvoice(
  db: Queryable,
  id: string,
  move: Transition<InvoiceStatus>,
  changes: InvoiceChanges,
  now: Date,
  pending?: string | null,
): Promise<InvoiceRow | undefined> {
  const params: unknown[] = [id, [...move.from], now];
  const assignments = ['updated_at = $3'];
  const set = (column: string, value: unknown) => {
    params.push(value);
    assignments.push(`${column} = $${params.length}`);
  };
  if (move.to !== undefined) set('status', move.to);
  for (const [column, value] of Object.entries(changes)) {
    if (value === undefined) continue;
    // Column names come from the InvoiceChanges type; this guards against a stray key at run time.
    if (!writable.has(column)) throw new Error(`invoices.${column} is not writable`);
    set(column, encode(column, value));
  }
  let condition = 'id = $1 AND status = ANY($2::text[])';
  if (pending === null) condition += ' AND pending_payment_id IS NULL';
  if (typeof pending === 'string') {
    params.push(pending);
    condition += ` AND pending_payment_id = $${params.length}`;
  }
  const [row] = await db.query<InvoiceRow>(
    `UPDATE invoices SET ${assignments.join(', ')} WHERE ${condition} RETURNING ${columns}`,
    params,
  );
  return row;
}

/** Removes a draft; zero rows means it is not (or no longer) a draft of this merchant. */
export async function deleteDraft(
  db: Queryable,
  merchantId: string,
  mode: string,
  id: string,
): Promise<InvoiceRow | undefined> {
  const [row] = await db.query<InvoiceRow>(
    `DELETE FROM invoices WHERE ${ownRowCondition('invoices', '$1', '$2', '$3')} AND status = 'draft' RETURNING ${columns}`,
    [id, merchantId, mode],
  );
  return row;
}

/**
 * The next invoice number of a merchant and mode, inside the finalizing transaction: one
 * statement that creates the counter or increments it, holding its row lock until commit, so two
 * finalizations never share a number and a rolled-back one gives its number back.
 */
export async function nextInvoiceNumber(
  db: Queryable,
  merchantId: string,
  mode: string,
  prefix: string,
): Promise<{ prefix: string; number: string }> {
  const [row] = await db.query<{ prefix: string; last_number: string }>(
    `INSERT INTO invoice_numbering (merchant_id, mode, prefix, last_number) VALUES ($1, $2, $3, 1)
     ON CONFLICT (merchant_id, mode) DO UPDATE SET last_number = invoice_numbering.last_number + 1
     RETURNING prefix, last_number`,
    [merchantId, mode, prefix],
  );
  if (!row) throw new Error('invoice_numbering returned no row');
  return { prefix: row.prefix, number: row.last_number };
}

export interface InvoiceFilters extends CreatedRange {
  customerId?: string;
  status?: InvoiceStatus;
  /** The dashboard's amount filter (minor units) and currency; not filters of the API's list. */
  amountGte?: bigint;
  amountLte?: bigint;
  currency?: string;
}

export async function selectInvoicePage(
  db: Queryable,
  merchantId: string,
  mode: string,
  filters: InvoiceFilters,
  page: PageRequest,
) {
  const filter = listFilter(merchantId, mode)
    .add((p) => `customer_id = ${p}`, filters.customerId)
    .add((p) => `status = ${p}`, filters.status)
    .add((p) => `amount_due >= ${p}`, filters.amountGte?.toString())
    .add((p) => `amount_due <= ${p}`, filters.amountLte?.toString())
    .add((p) => `currency = ${p}`, filters.currency)
    .created(filters);
  return selectPage<InvoiceRow>(db, { table: 'invoices', columns, where: filter.where, params: filter.params }, page);
}

/** Invoices of each status, for the dashboard's status tabs (countByStatus, docs/decisions/0022). */
export function countInvoicesByStatus(
  db: Queryable,
  merchantId: string,
  mode: string,
  statuses: readonly string[],
  range: { createdGte?: Date; createdLte?: Date },
  cap: number,
): Promise<StatusCounts> {
  return countByStatus(db, 'invoices', merchantId, mode, statuses, range, cap);
}
