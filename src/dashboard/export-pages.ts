import { Readable } from 'node:stream';
import type { App } from '../http/server.js';
import { DomainError } from '../core/errors.js';
import type { Page } from '../core/page.js';
import { ListCustomersQuery } from '../customers/schemas.js';
import { csvLine } from '../csv.js';
import { paymentQuery } from './payment-search.js';
import { invoiceQuery, refundQuery } from './list-queries.js';
import { page, type DashboardDeps, type PageContext } from './kit.js';
import { given, validated } from './validate.js';

type Cell = string | number | null | undefined;

/** A list that can be exported: its columns, a row per object, and its pages under the list's filters. */
interface Export<T extends { id: string }> {
  columns: readonly string[];
  row: (item: T) => Cell[];
  /** Checks the filters (throwing before anything is sent) and answers a page reader. */
  pages: (ctx: PageContext, deps: DashboardDeps) => (startingAfter?: string) => Promise<Page<T>>;
}

const pageSize = 100;
const filtersOf = (ctx: PageContext) => ctx.request.query as Record<string, string>;

const payments: Export<{
  id: string;
  created: string;
  status: string;
  amount: string;
  currency: string;
  customerId?: string | null;
  orderNo?: unknown;
  description?: string | null;
}> = {
  // Never card data: the payment method's id only, as the payment object carries it.
  columns: ['id', 'created', 'status', 'amount', 'currency', 'customerId', 'orderNo', 'description'],
  row: (p) => [p.id, p.created, p.status, p.amount, p.currency, p.customerId, orderNoText(p.orderNo), p.description],
  pages: (ctx, deps) => {
    const { listQuery, search } = paymentQuery(filtersOf(ctx), pageSize);
    return (startingAfter) =>
      deps.payments.list(ctx.merchant, { ...listQuery, ...(startingAfter ? { startingAfter } : {}) }, search);
  },
};

const customers: Export<Awaited<ReturnType<DashboardDeps['customers']['list']>>['data'][number]> = {
  columns: ['id', 'created', 'email', 'firstName', 'lastName', 'phone', 'merchantUserId', 'description'],
  row: (c) => [c.id, c.created, c.email, c.firstName, c.lastName, c.phone, c.merchantUserId, c.description],
  pages: (ctx, deps) => {
    const query = validated<ListCustomersQuery>(
      ListCustomersQuery,
      { limit: pageSize, ...given({ email: filtersOf(ctx).email }) },
      'querystring',
    );
    return (startingAfter) => deps.customers.list(ctx.merchant, { ...query, ...given({ startingAfter }) });
  },
};

const refunds: Export<Awaited<ReturnType<DashboardDeps['refunds']['list']>>['data'][number]> = {
  columns: ['id', 'created', 'status', 'amount', 'currency', 'paymentId', 'reason', 'failureReason'],
  row: (r) => [r.id, r.created, r.status, r.amount, r.currency, r.paymentId, r.reason, r.failureReason],
  pages: (ctx, deps) => {
    const { listQuery, search } = refundQuery(filtersOf(ctx), pageSize);
    return (startingAfter) => deps.refunds.list(ctx.merchant, { ...listQuery, ...given({ startingAfter }) }, search);
  },
};

const invoices: Export<Awaited<ReturnType<DashboardDeps['invoices']['list']>>['data'][number]> = {
  columns: ['id', 'number', 'created', 'status', 'customerId', 'currency', 'amountDue', 'amountPaid', 'dueDate'],
  row: (i) => [i.id, i.number, i.created, i.status, i.customerId, i.currency, i.amountDue, i.amountPaid, i.dueDate],
  pages: (ctx, deps) => {
    const { listQuery, search } = invoiceQuery(filtersOf(ctx), pageSize);
    return (startingAfter) => deps.invoices.list(ctx.merchant, { ...listQuery, ...given({ startingAfter }) }, search);
  },
};

function orderNoText(orderNo: unknown): string {
  return orderNo === null || orderNo === undefined ? '' : String(orderNo);
}

/** Every row, page after page through the domain service, as CSV lines; the header first. */
async function* csvLines<T extends { id: string }>(spec: Export<T>, read: (after?: string) => Promise<Page<T>>) {
  yield csvLine(spec.columns);
  let after: string | undefined;
  for (;;) {
    const { data, hasMore } = await read(after);
    for (const item of data) yield csvLine(spec.row(item));
    const last = data[data.length - 1];
    if (!hasMore || !last) return;
    after = last.id;
  }
}

/**
 * Exports (docs/dashboard.md#roles: Analyst, Administrator, Owner): each list as CSV with the list's current
 * filters, streamed a page at a time through the same service the page uses, and audited.
 */
export function exportPages(app: App, deps: DashboardDeps): void {
  const route = <T extends { id: string }>(name: string, spec: Export<T>) =>
    page(app, deps, 'GET', `/${name}/export.csv`, 'exports.read', async (ctx) => {
      let read: (after?: string) => Promise<Page<T>>;
      try {
        read = spec.pages(ctx, deps);
      } catch (err) {
        // The payment filters refuse a field with a plain error naming it: answered as the API would.
        const { field, message } = err as { field?: string; message?: string };
        if (field) throw new DomainError('invalid_request', message ?? `${field} is not valid`, { param: field });
        throw err;
      }
      await deps.team.audit(ctx.actor, `export.${name}`, null);
      ctx.reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="${name}-${ctx.merchant.mode}.csv"`)
        .send(Readable.from(csvLines(spec, read)));
    });
  route('payments', payments);
  route('customers', customers);
  route('refunds', refunds);
  route('invoices', invoices);
}
