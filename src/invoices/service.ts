import type { MerchantContext } from '../core/merchant-context.js';
import type { Page } from '../core/page.js';
import { createdBounds } from '../core/common-schemas.js';
import { isId } from '../ids.js';
import type { Queryable } from '../db/db.js';
import type { RecordedEvent } from '../events/service.js';
import type { InvoicePaymentEnd } from '../payments/service.js';
import { finalizeInvoice, markUncollectible, sendInvoice, voidInvoice } from './actions.js';
import { collectInvoice, collectJobKind, payInvoice, paymentEnded } from './collection.js';
import { createInvoice, deleteInvoice, updateInvoice } from './editing.js';
import type { HostedInvoiceView } from '../shopper/invoice-page.js';
import { paymentUnderWay, payOnHostedPage } from './hosted-payment.js';
import { lineTotal } from './line-items.js';
import * as queries from './queries.js';
import { invoiceStatuses } from './states.js';
import { hostedTokenMatches, hostedTokenOf, loadInvoice, toInvoice, type InvoiceDeps } from './records.js';
import type { CreateInvoiceBody, Invoice, ListInvoicesQuery, PayInvoiceBody, UpdateInvoiceBody } from './schemas.js';

export type { InvoiceDeps } from './records.js';

/** The dashboard's filters of the invoices list beyond the API's: amount (minor units) and currency. */
export type InvoiceSearch = Pick<queries.InvoiceFilters, 'amountGte' | 'amountLte' | 'currency'>;

/**
 * Invoices (docs/api.md#invoices): the operations of the API and of the hosted page, each a function over
 * the explicit dependencies in `deps` (editing.ts, actions.ts, collection.ts, hosted-payment.ts),
 * bound here with the automatic collection job.
 */
export function createInvoiceService(deps: InvoiceDeps) {
  const { db } = deps;
  deps.jobs.register(collectJobKind, (invoiceId) => collectInvoice(deps, invoiceId));

  return {
    create: (merchant: MerchantContext, input: CreateInvoiceBody) => createInvoice(deps, merchant, input),

    async retrieve(merchant: MerchantContext, id: string): Promise<Invoice> {
      return toInvoice(deps, await loadInvoice(db, merchant, id));
    },

    /** The API's list; `search` adds the dashboard's amount and currency filters. */
    async list(
      merchant: MerchantContext,
      query: ListInvoicesQuery,
      search: InvoiceSearch = {},
    ): Promise<Page<Invoice>> {
      const { rows, hasMore } = await queries.selectInvoicePage(
        db,
        merchant.merchantId,
        merchant.mode,
        {
          customerId: query.customerId,
          status: query.status,
          ...createdBounds(query),
          ...search,
        },
        query,
      );
      return { data: rows.map((row) => toInvoice(deps, row)), hasMore };
    },

    /** The dashboard's status tabs: invoices of each status (and all), each count stopped at `cap`. */
    countByStatus(merchant: MerchantContext, range: { createdGte?: Date; createdLte?: Date }, cap: number) {
      return queries.countInvoicesByStatus(db, merchant.merchantId, merchant.mode, invoiceStatuses, range, cap);
    },

    update: (merchant: MerchantContext, id: string, input: UpdateInvoiceBody) =>
      updateInvoice(deps, merchant, id, input),
    delete: (merchant: MerchantContext, id: string) => deleteInvoice(deps, merchant, id),
    finalize: (merchant: MerchantContext, id: string) => finalizeInvoice(deps, merchant, id),
    send: (merchant: MerchantContext, id: string) => sendInvoice(deps, merchant, id),
    void: (merchant: MerchantContext, id: string) => voidInvoice(deps, merchant, id),
    markUncollectible: (merchant: MerchantContext, id: string) => markUncollectible(deps, merchant, id),
    pay: (merchant: MerchantContext, id: string, input: PayInvoiceBody) => payInvoice(deps, merchant, id, input),

    /** The payments hook (src/payments/invoice-hook.ts), bound in src/composition/services.ts. */
    paymentEnded: (tx: Queryable, recorded: RecordedEvent[], end: InvoicePaymentEnd) =>
      paymentEnded(deps, tx, recorded, end),

    /** The hosted page's view of a finalized invoice; null for a wrong id or token, or a draft. */
    async hostedPage(invoiceId: string, token: string): Promise<HostedInvoiceView | null> {
      if (!isId('in', invoiceId) || !hostedTokenMatches(deps, invoiceId, token)) return null;
      const row = await queries.selectInvoiceById(db, invoiceId);
      if (!row || row.status === 'draft') return null;
      return hostedView(deps, row);
    },

    /** The hosted page's card form, posted (hosted-payment.ts). */
    async payOnHostedPage(invoiceId: string, form: Record<string, unknown>) {
      const result = await payOnHostedPage(deps, invoiceId, form);
      if (result.kind !== 'refused') return result;
      return { kind: 'refused' as const, view: await hostedView(deps, result.row), state: result.state };
    },
  };
}

/** What the hosted page shows of an invoice; the page writes amounts and dates in the customer's language. */
export async function hostedView(deps: InvoiceDeps, row: queries.InvoiceRow): Promise<HostedInvoiceView> {
  const merchant = await deps.merchants.retrieve(row.merchant_id);
  return {
    invoiceId: row.id,
    token: hostedTokenOf(deps, row.id),
    brand: { name: merchant.name, brandColor: merchant.brandColor, logoUrl: merchant.logoUrl },
    number: row.number ?? '',
    status: row.status === 'draft' ? 'open' : row.status,
    description: row.description,
    currency: row.currency,
    lines: row.line_items.map((item) => ({
      description: item.description,
      quantity: item.quantity,
      unitAmount: BigInt(item.amount),
      total: lineTotal(item),
    })),
    total: BigInt(row.amount_due),
    remaining: BigInt(row.amount_remaining),
    dueDate: row.due_date,
    paidAt: row.paid_at,
    paymentPending: await paymentUnderWay(deps, row),
    lastError: row.last_error_message === null && row.last_error_code === null ? null : { code: row.last_error_code },
  };
}

export type InvoiceService = ReturnType<typeof createInvoiceService>;
