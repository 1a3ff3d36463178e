/**
 * The payments list's filters (the page's query) as the payment service's query and search; the
 * CSV export reads the same filters through the same function.
 */
import { ListPaymentsQuery } from '../payments/params-schemas.js';
import { paymentStatuses } from '../payments/states.js';
import type { PaymentSearch } from '../payments/service.js';
import { given, validated } from './validate.js';
import { amountSearch, createdQuery, refuse } from './list-filters.js';

/**
 * The search box and the status, currency and amount filters, as the payment service's search
 * (issue 11): a payment id finds that payment, an e-mail address the payments of that customer
 * or card holder, anything else an order number.
 */
function searchOf(filters: Record<string, string>): PaymentSearch {
  const search: PaymentSearch = {};
  const q = filters.q?.trim() ?? '';
  if (q.length > 254) throw refuse('q', 'q must be at most 254 characters');
  if (/^pt_\d{19}$/.test(q)) search.ids = [q];
  else if (q.includes('@')) search.email = q;
  if (filters.status) {
    if (!(paymentStatuses as readonly string[]).includes(filters.status))
      throw refuse('status', `status must be one of: ${paymentStatuses.join(', ')}`);
    search.statuses = [filters.status];
  }
  Object.assign(
    search,
    amountSearch({
      currency: filters.currency ?? '',
      amountMin: filters.amountMin ?? '',
      amountMax: filters.amountMax ?? '',
    }),
  );
  return search;
}

/** Search text that is neither a payment id nor an e-mail address is an order number. */
function orderNoOf(q: string): string {
  const text = q.trim();
  return /^pt_\d{19}$/.test(text) || text.includes('@') ? '' : text;
}

/** The list's filters (the page's query) as the payment service's query and search; the export uses the same. */
export function paymentQuery(filters: Record<string, string>, limit: number) {
  const listQuery = validated<ListPaymentsQuery>(
    ListPaymentsQuery,
    {
      limit,
      ...given({
        customerId: filters.customer,
        orderNo: filters.orderNo || orderNoOf(filters.q ?? ''),
        ...createdQuery({ from: filters.from ?? '', to: filters.to ?? '' }),
      }),
    },
    'querystring',
  );
  return { listQuery, search: searchOf(filters) };
}
