import type { App } from '../http/server.js';
import { ListCustomersQuery } from '../customers/schemas.js';
import { ListRefundsQuery } from '../refunds/schemas.js';
import { refundStatuses } from '../refunds/states.js';
import { html, type SafeHtml } from './html.js';
import { field, formError, layout, money, select, table, when, type FieldErrors } from './layout.js';
import { fieldErrors, page, type DashboardDeps } from './kit.js';
import { given, validated } from './validate.js';
import { exportLink } from './csv.js';
import { emptyState, moneyCell, statusBadge, statusWords } from './ui.js';

const base = '/dashboard';

/** Customers (with their payment methods, brand and last four only, and payments) and refunds: read-only pages. */
export function customerPages(app: App, deps: DashboardDeps): void {
  page(app, deps, 'GET', '/customers', 'customers.read', async (ctx) => {
    const email = (ctx.request.query as Record<string, string>).email ?? '';
    let errors: FieldErrors | undefined;
    let rows: SafeHtml[] = [];
    try {
      const query = validated<ListCustomersQuery>(
        ListCustomersQuery,
        { limit: 50, ...given({ email }) },
        'querystring',
      );
      const customers = await deps.customers.list(ctx.merchant, query);
      rows = customers.data.map(
        (customer) =>
          html`<tr>
            <td>
              <a href="${base}/customers/${customer.id}"
                >${[customer.firstName, customer.lastName].filter(Boolean).join(' ') || customer.email || customer.id}</a
              >
            </td>
            <td>${customer.email ?? '—'}</td>
            <td class="hide-narrow">${customer.id}</td>
            <td>${when(customer.created)}</td>
          </tr>`,
      );
    } catch (err) {
      errors = fieldErrors(err, 'email');
      ctx.reply.code(400);
    }
    return layout(
      { title: 'Customers', session: ctx.session, current: '/customers' },
      html`<h1>Customers</h1>
        <form class="filters" method="get" action="${base}/customers" novalidate>
          ${field({ name: 'email', label: 'E-mail', type: 'email', value: email, errors })}
          <button type="submit">Filter</button>
        </form>
        ${formError(errors)} ${exportLink(ctx, '/customers', { email })}
        ${table(
          ['Customer', 'E-mail', 'Id', 'Created'],
          rows,
          email
            ? emptyState({
                title: 'No customer has this e-mail',
                body: html`<a href="${base}/customers">Show every customer</a>`,
              })
            : emptyState({
                title: 'No customers yet',
                body: 'Customers are created with the API (POST /api/services/v1/customers/create) or by a checkout that saves the card.',
              }),
          'Customers',
        )}`,
    );
  });

  page(app, deps, 'GET', '/customers/:id', 'customers.read', async (ctx) => {
    const customer = await deps.customers.retrieve(ctx.merchant, (ctx.request.params as { id: string }).id);
    const methods = await deps.paymentMethods.listOfCustomer(ctx.merchant, customer.id, { limit: 50 });
    const payments = await deps.payments.list(ctx.merchant, { limit: 50, customerId: customer.id });
    const name = [customer.firstName, customer.lastName].filter(Boolean).join(' ');
    return layout(
      { title: `Customer ${customer.id}`, session: ctx.session, current: '/customers' },
      html`<p><a href="${base}/customers">← Customers</a></p>
        <h1>${name || customer.email || customer.id}</h1>
        <dl class="facts card">
          <dt>Id</dt>
          <dd>${customer.id}</dd>
          <dt>E-mail</dt>
          <dd>${customer.email ?? '—'}</dd>
          <dt>Phone</dt>
          <dd>${customer.phone ?? '—'}</dd>
          <dt>Merchant user id</dt>
          <dd>${customer.merchantUserId ?? '—'}</dd>
          <dt>Description</dt>
          <dd>${customer.description ?? '—'}</dd>
          <dt>Created</dt>
          <dd>${when(customer.created)}</dd>
        </dl>
        <h2>Payment methods</h2>
        ${table(
          ['Payment method', 'Card', 'Created'],
          // Brand and last four digits only (SPEC §1): never more of the card.
          methods.data.map(
            (method) =>
              html`<tr>
                <td>${method.id}</td>
                <td>${method.card.brand} •••• ${method.card.last4}</td>
                <td>${when(method.created)}</td>
              </tr>`,
          ),
          'No payment methods.',
        )}
        <h2>Payments</h2>
        ${table(
          ['Amount', 'Status', 'Payment', 'Created'],
          payments.data.map(
            (payment) =>
              html`<tr>
                ${moneyCell(payment.amount, payment.currency)}
                <td>${statusBadge(payment.displayStatus)}</td>
                <td><a href="${base}/payments/${payment.id}">${payment.id}</a></td>
                <td>${when(payment.created)}</td>
              </tr>`,
          ),
          'No payments.',
        )}
        <p><a href="${base}/invoices?customer=${customer.id}">Invoices of this customer</a></p>`,
    );
  });

  page(app, deps, 'GET', '/refunds', 'refunds.read', async (ctx) => {
    const query = ctx.request.query as Record<string, string>;
    const filters = { payment: query.payment ?? '', status: query.status ?? '' };
    let errors: FieldErrors | undefined;
    let rows: SafeHtml[] = [];
    try {
      const listQuery = validated<ListRefundsQuery>(
        ListRefundsQuery,
        { limit: 50, ...given({ paymentId: filters.payment, status: filters.status }) },
        'querystring',
      );
      const refunds = await deps.refunds.list(ctx.merchant, listQuery);
      rows = refunds.data.map(
        (refund) =>
          html`<tr>
            ${moneyCell(refund.amount, refund.currency)}
            <td>${statusBadge(refund.status)}</td>
            <td><a href="${base}/refunds/${refund.id}">${refund.id}</a></td>
            <td class="hide-narrow"><a href="${base}/payments/${refund.paymentId}">${refund.paymentId}</a></td>
            <td>${when(refund.created)}</td>
          </tr>`,
      );
    } catch (err) {
      errors = fieldErrors(err, 'payment');
      if (errors.paymentId) errors = { payment: errors.paymentId };
      ctx.reply.code(400);
    }
    return layout(
      { title: 'Refunds', session: ctx.session, current: '/refunds' },
      html`<h1>Refunds</h1>
        <form class="filters" method="get" action="${base}/refunds" novalidate>
          ${field({ name: 'payment', label: 'Payment id', value: filters.payment, errors })}
          ${select({ name: 'status', label: 'Status', value: filters.status, errors, choices: [['', 'Any'], ...refundStatuses.map((status) => [status, statusWords(status)] as const)] })}
          <button type="submit">Filter</button>
        </form>
        ${formError(errors)} ${exportLink(ctx, '/refunds', filters)}
        ${table(
          ['Amount', 'Status', 'Refund', 'Payment', 'Created'],
          rows,
          emptyState({
            title: filters.payment || filters.status ? 'No refunds match these filters' : 'No refunds yet',
            body: 'A refund is made from a payment’s page (Refund), or with POST /api/services/v1/refunds/create.',
          }),
          'Refunds',
        )}`,
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
