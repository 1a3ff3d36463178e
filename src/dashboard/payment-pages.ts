import type { App } from '../http/server.js';
import { ListPaymentsQuery } from '../payments/params-schemas.js';
import { CreateRefundBody, refundReasons } from '../refunds/schemas.js';
import { formatAmount } from '../money.js';
import { paymentStatuses } from '../payments/states.js';
import type { PaymentSearch } from '../payments/service.js';
import { html, type SafeHtml } from './html.js';
import { csrfField, field, formError, layout, select, table, when, type FieldErrors } from './layout.js';
import { fieldErrors, page, text, type DashboardDeps, type PageContext } from './kit.js';
import { given, validated } from './validate.js';
import { exportLink } from './csv.js';

const base = '/dashboard/payments';

/** A field of the search form refused with its message (shown beside it). */
const refuse = (name: string, message: string) => Object.assign(new Error(message), { field: name });

/**
 * The search box and the status and amount filters, as the payment service's search (issue 11):
 * a payment id finds that payment, an e-mail address the payments of that customer or card
 * holder, anything else an order number.
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
  for (const [name, key] of [
    ['amountMin', 'amountGte'],
    ['amountMax', 'amountLte'],
  ] as const) {
    const value = filters[name]?.trim() ?? '';
    if (!value) continue;
    if (!/^\d{1,18}$/.test(value)) throw refuse(name, `${name} must be a whole number of minor units`);
    search[key] = BigInt(value);
  }
  return search;
}

/** Search text that is neither a payment id nor an e-mail address is an order number. */
function orderNoOf(q: string): string {
  const text = q.trim();
  return /^pt_\d{19}$/.test(text) || text.includes('@') ? '' : text;
}

/** The list's filters (the page's query) as the payment service's query and search; the export uses the same. */
export function paymentQuery(filters: Record<string, string>, limit: number) {
  const dateOf = (value: string | undefined, name: string, endOfDay: boolean) => {
    if (!value) return undefined;
    if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(Date.parse(value)))
      throw refuse(name, `${name} must be a date (YYYY-MM-DD)`);
    return `${value}T${endOfDay ? '23:59:59.999' : '00:00:00.000'}Z`;
  };
  const listQuery = validated<ListPaymentsQuery>(
    ListPaymentsQuery,
    {
      limit,
      ...given({
        customerId: filters.customer,
        orderNo: filters.orderNo || orderNoOf(filters.q ?? ''),
        'created[gte]': dateOf(filters.from, 'from', false),
        'created[lte]': dateOf(filters.to, 'to', true),
      }),
    },
    'querystring',
  );
  return { listQuery, search: searchOf(filters) };
}

const money = (amount: string, currency: string) => `${formatAmount(BigInt(amount), currency)} ${currency}`;

/** Payments: list with filters, detail with its timeline, and the refund action (the refund service's). */
export function paymentPages(app: App, deps: DashboardDeps): void {
  page(app, deps, 'GET', '/payments', 'payments.read', async (ctx) => {
    const query = ctx.request.query as Record<string, string>;
    const filters = {
      q: query.q ?? '',
      status: query.status ?? '',
      customer: query.customer ?? '',
      orderNo: query.orderNo ?? '',
      amountMin: query.amountMin ?? '',
      amountMax: query.amountMax ?? '',
      from: query.from ?? '',
      to: query.to ?? '',
    };
    let errors: FieldErrors | undefined;
    let rows: SafeHtml[] = [];
    try {
      const { listQuery, search } = paymentQuery(filters, 50);
      const payments = await deps.payments.list(ctx.merchant, listQuery, search);
      rows = payments.data.map(
        (payment) =>
          html`<tr>
            <td><a href="${base}/${payment.id}">${payment.id}</a></td>
            <td class="num">${money(payment.amount, payment.currency)}</td>
            <td>${payment.status}</td>
            <td class="hide-narrow">${payment.customerId ?? ''}</td>
            <td class="hide-narrow">${payment.orderNo === null ? '' : String(payment.orderNo)}</td>
            <td>${when(payment.created)}</td>
          </tr>`,
      );
    } catch (err) {
      const { field: name, message } = err as { field?: string; message?: string };
      errors = name ? { [name]: message || `${name} must be a date (YYYY-MM-DD)` } : fieldErrors(err, 'customer');
      if (errors.customerId) errors = { customer: errors.customerId };
      ctx.reply.code(400);
    }
    return layout(
      { title: 'Payments', session: ctx.session, current: '/payments' },
      html`<h1>Payments</h1>
        <form class="filters" method="get" action="${base}" novalidate>
          ${field({ name: 'q', label: 'Search', value: filters.q, errors, hint: 'Payment id, order number or e-mail' })}
          ${select({ name: 'status', label: 'Status', value: filters.status, errors, choices: [['', 'Any'], ...paymentStatuses.map((status) => [status, status.replace(/_/g, ' ')] as const)] })}
          ${field({ name: 'amountMin', label: 'Amount from (minor units)', value: filters.amountMin, errors, inputmode: 'numeric' })}
          ${field({ name: 'amountMax', label: 'Amount to (minor units)', value: filters.amountMax, errors, inputmode: 'numeric' })}
          ${field({ name: 'customer', label: 'Customer id', value: filters.customer, errors })}
          ${field({ name: 'orderNo', label: 'Order number', value: filters.orderNo, errors })}
          ${field({ name: 'from', label: 'From (date)', type: 'date', value: filters.from, errors })}
          ${field({ name: 'to', label: 'To (date)', type: 'date', value: filters.to, errors })}
          <button type="submit">Filter</button>
        </form>
        ${formError(errors)} ${exportLink(ctx, '/payments', filters)}
        ${table(['Payment', 'Amount', 'Status', 'Customer', 'Order', 'Created'], rows, 'No payments.')}`,
    );
  });

  const detailPage = async (
    ctx: PageContext,
    id: string,
    extra: { values?: Record<string, string>; errors?: FieldErrors; notice?: string } = {},
  ) => {
    const payment = await deps.payments.retrieve(ctx.merchant, id);
    // Brand and last four digits only (SPEC §1): never more of the card.
    const card = payment.paymentMethod
      ? await deps.paymentMethods.retrieve(ctx.merchant, payment.paymentMethod).then(
          (method) => method.card,
          () => null,
        )
      : null;
    const events = await deps.events.list(ctx.merchant, { limit: 100, objectId: id });
    const timeline: SafeHtml[] = [];
    for (const event of [...events.data].reverse()) {
      const deliveries = await deps.webhookDeliveries.listForEvent(ctx.merchant, event.id, { limit: 20 });
      timeline.push(
        html`<tr>
          <td>${when(event.created)}</td>
          <td><a href="/dashboard/developers/events/${event.id}">${event.type}</a></td>
          <td>
            ${deliveries.data.map((delivery) => html`<div>${delivery.kind} → ${delivery.url}: <span class="status-${delivery.status}">${delivery.status}</span> (${delivery.attempts})</div>`)}
          </td>
        </tr>`,
      );
    }
    const { errors } = extra;
    const values = extra.values ?? {};
    return layout(
      { title: `Payment ${payment.id}`, session: ctx.session, current: '/payments', notice: extra.notice },
      html`<p><a href="${base}">← Payments</a></p>
        <h1>${money(payment.amount, payment.currency)} · ${payment.status}</h1>
        <dl class="facts card">
          <dt>Id</dt>
          <dd>${payment.id}</dd>
          <dt>Received</dt>
          <dd>${money(payment.amountReceived, payment.currency)}</dd>
          <dt>Refunded</dt>
          <dd>${money(payment.amountRefunded, payment.currency)}</dd>
          <dt>Card</dt>
          <dd>${card ? `${card.brand} •••• ${card.last4}` : '—'}</dd>
          <dt>Customer</dt>
          <dd>${payment.customerId ?? '—'}</dd>
          <dt>Order</dt>
          <dd>${payment.orderNo === null ? '—' : String(payment.orderNo)}</dd>
          <dt>Created</dt>
          <dd>${when(payment.created)}</dd>
          ${
            payment.errorCode
              ? html`<dt>Error</dt>
                  <dd>${payment.errorCode}: ${payment.errorMessage ?? ''}</dd>`
              : ''
          }
        </dl>
        <h2>Timeline</h2>
        ${table(['When', 'Event', 'Deliveries'], timeline, 'No events yet.')}
        <h2>Refund</h2>
        <form class="card" method="post" action="${base}/${payment.id}/refund" novalidate>
          ${csrfField(ctx.session.csrfToken)} ${formError(errors)}
          ${field({ name: 'amount', label: `Amount in minor units (${payment.currency})`, value: values.amount, errors, inputmode: 'numeric', hint: 'Leave empty to refund everything that is left' })}
          ${select({ name: 'reason', label: 'Reason', value: values.reason ?? 'requested_by_customer', errors, choices: refundReasons.map((reason) => [reason, reason.replace(/_/g, ' ')] as const) })}
          ${field({ name: 'note', label: 'Note', value: values.note, errors, hint: 'Required with reason “other”' })}
          <button type="submit">Refund</button>
        </form>`,
    );
  };

  page(app, deps, 'GET', '/payments/:id', 'payments.read', (ctx) =>
    detailPage(ctx, (ctx.request.params as { id: string }).id),
  );

  page(app, deps, 'POST', '/payments/:id/refund', 'refunds.create', async (ctx) => {
    const id = (ctx.request.params as { id: string }).id;
    const values = {
      amount: text(ctx.form, 'amount').trim(),
      reason: text(ctx.form, 'reason'),
      note: text(ctx.form, 'note'),
    };
    try {
      const input = validated<CreateRefundBody>(CreateRefundBody, { paymentId: id, ...given(values) });
      const refund = await deps.refunds.create(ctx.merchant, input);
      await deps.team.audit(ctx.actor, 'refund.created', refund.id);
      return detailPage(ctx, id, { notice: `Refund ${refund.id} created (${refund.status}).` });
    } catch (err) {
      ctx.reply.code(400);
      return detailPage(ctx, id, { values, errors: fieldErrors(err, 'amount') });
    }
  });
}
