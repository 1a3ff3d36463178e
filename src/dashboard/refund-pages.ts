import type { App } from '../http/server.js';
import { refundStatuses } from '../refunds/states.js';
import { html, type SafeHtml } from '../web/html.js';
import { field, formError, layout, money, table, when, type FieldErrors } from './layout.js';
import { fieldErrors, page, type DashboardDeps } from './kit.js';
import { exportLink } from './csv.js';
import {
  amountFields,
  createdRange,
  dateFields,
  refusedFilters,
  listNavigation,
  moneyFiltersOf,
  noMatchState,
  statusCountCap,
  statusKept,
  statusTabsOf,
} from './list-filters.js';
import { refundQuery } from './list-queries.js';
import { payersOf } from './people.js';
import { emptyState, moneyCell, personText, statusBadge, type StatusTab } from './ui.js';

const base = '/dashboard';

/**
 * Refunds: the list (who was refunded, status tabs with counts, quick date ranges, amounts in
 * major units; docs/dashboard.md#pages) and each refund's page; read-only, a refund is made from its payment.
 */
export function refundPages(app: App, deps: DashboardDeps): void {
  page(app, deps, 'GET', '/refunds', 'refunds.read', async (ctx) => {
    const query = ctx.request.query as Record<string, string>;
    const shared = moneyFiltersOf(query);
    const filters = { payment: query.payment ?? '', ...shared };
    let errors: FieldErrors | undefined;
    let rows: SafeHtml[] = [];
    let tabs: StatusTab[] = [];
    try {
      const { listQuery, search } = refundQuery(filters, 50);
      const [refunds, counts] = await Promise.all([
        deps.refunds.list(ctx.merchant, listQuery, search),
        deps.refunds.countByStatus(ctx.merchant, createdRange(shared), statusCountCap),
      ]);
      tabs = statusTabsOf({
        statuses: refundStatuses,
        counts,
        selected: shared.status,
        alwaysShown: new Set(refundStatuses),
      });
      // Who was refunded: the refunded payment's customer, else its card holder.
      const paymentIds = [...new Set(refunds.data.map((refund) => refund.paymentId))];
      const payments =
        paymentIds.length > 0
          ? (await deps.payments.list(ctx.merchant, { limit: paymentIds.length }, { ids: paymentIds })).data
          : [];
      const paymentOf = new Map(payments.map((payment) => [payment.id, payment]));
      const personOf = await payersOf(deps, ctx, payments);
      rows = refunds.data.map((refund) => {
        const payment = paymentOf.get(refund.paymentId);
        return html`<tr>
          ${moneyCell(refund.amount, refund.currency)}
          <td>${statusBadge(refund.status)}</td>
          <td><a href="${base}/refunds/${refund.id}">${refund.id}</a></td>
          <td>${payment ? personText(personOf(payment), payment.customerId) : '—'}</td>
          <td class="hide-narrow"><a href="${base}/payments/${refund.paymentId}">${refund.paymentId}</a></td>
          <td>${when(refund.created)}</td>
        </tr>`;
      });
    } catch (err) {
      errors = refusedFilters(err, (refused) => fieldErrors(refused, 'payment'), { paymentId: 'payment' });
      ctx.reply.code(400);
    }
    const filtered = Object.entries(filters).some(([name, value]) => name !== 'status' && value !== '');
    return layout(
      { title: 'Refunds', session: ctx.session, current: '/refunds' },
      html`<h1>Refunds</h1>
        ${listNavigation({ path: `${base}/refunds`, filters, tabs, label: 'Refunds by status', now: deps.clock.now() })}
        <form class="filters" method="get" action="${base}/refunds" novalidate>
          ${statusKept(shared, errors)}
          ${field({ name: 'payment', label: 'Payment id', value: filters.payment, errors })}
          ${amountFields(shared, errors)} ${dateFields(shared, errors)}
          <button type="submit">Filter</button>
        </form>
        ${formError(errors)} ${exportLink(ctx, '/refunds', filters)}
        ${
          errors
            ? ''
            : table(
                ['Amount', 'Status', 'Refund', 'Customer', 'Payment', 'Created'],
                rows,
                filtered
                  ? noMatchState('refunds', `${base}/refunds`)
                  : emptyState({
                      title: shared.status ? `No ${shared.status} refunds` : 'No refunds yet',
                      body: 'A refund is made from a payment’s page (Refund), or with POST /api/services/v1/refunds/create.',
                    }),
                'Refunds',
              )
        }`,
    );
  });

  page(app, deps, 'GET', '/refunds/:id', 'refunds.read', async (ctx) => {
    const refund = await deps.refunds.retrieve(ctx.merchant, (ctx.request.params as { id: string }).id);
    return layout(
      { title: `Refund ${refund.id}`, session: ctx.session, current: '/refunds' },
      html`<p><a href="${base}/refunds">← Refunds</a></p>
        <h1>${money(refund.amount, refund.currency)} ${statusBadge(refund.status)}</h1>
        <dl class="facts card">
          <dt>Id</dt>
          <dd>${refund.id}</dd>
          <dt>Payment</dt>
          <dd><a href="${base}/payments/${refund.paymentId}">${refund.paymentId}</a></dd>
          <dt>Reason</dt>
          <dd>${refund.reason ?? '—'}</dd>
          <dt>Note</dt>
          <dd>${refund.note ?? '—'}</dd>
          <dt>Description</dt>
          <dd>${refund.description ?? '—'}</dd>
          ${
            refund.failureReason
              ? html`<dt>Failure</dt>
                  <dd>${refund.failureReason}</dd>`
              : ''
          }
          <dt>Created</dt>
          <dd>${when(refund.created)}</dd>
        </dl>`,
    );
  });
}
