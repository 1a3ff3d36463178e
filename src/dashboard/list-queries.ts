/**
 * The refunds and invoices lists' filters (the page's query) as their service's query and search;
 * each list's CSV export reads the same filters through the same function (as payment-search.ts
 * does for payments).
 */
import { ListInvoicesQuery } from '../invoices/schemas.js';
import type { InvoiceSearch } from '../invoices/service.js';
import { ListRefundsQuery } from '../refunds/schemas.js';
import type { RefundSearch } from '../refunds/service.js';
import { amountSearch, createdQuery, moneyFiltersOf } from './list-filters.js';
import { given, validated } from './validate.js';

/** Refunds: of one payment (`payment`), by status, date range, currency and amount (major units). */
export function refundQuery(query: Record<string, string | undefined>, limit: number) {
  const filters = moneyFiltersOf(query);
  const listQuery = validated<ListRefundsQuery>(
    ListRefundsQuery,
    { limit, ...given({ paymentId: query.payment, status: filters.status, ...createdQuery(filters) }) },
    'querystring',
  );
  const search: RefundSearch = amountSearch(filters);
  return { listQuery, search };
}

/** Invoices: of one customer (`customer`), by status, date range, currency and amount due (major units). */
export function invoiceQuery(query: Record<string, string | undefined>, limit: number) {
  const filters = moneyFiltersOf(query);
  const listQuery = validated<ListInvoicesQuery>(
    ListInvoicesQuery,
    { limit, ...given({ customerId: query.customer, status: filters.status, ...createdQuery(filters) }) },
    'querystring',
  );
  const search: InvoiceSearch = amountSearch(filters);
  return { listQuery, search };
}
