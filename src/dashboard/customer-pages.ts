import type { App } from '../http/server.js';
import { ListCustomersQuery } from '../customers/schemas.js';
import { html, type SafeHtml } from '../web/html.js';
import { field, formError, layout, table, when, type FieldErrors } from './layout.js';
import { fieldErrors, page, type DashboardDeps } from './kit.js';
import { given, validated } from './validate.js';
import { exportLink } from './csv.js';
import { emptyState, moneyCell, statusBadge } from './ui.js';

const base = '/dashboard';

/** Customers (with their payment methods, brand and last four only, and payments): read-only pages. */
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
          // Brand and last four digits only (docs/api.md#what-the-service-does): never more of the card.
          methods.data.map(
            (method) =>
              html`<tr>
                <td>${method.id}</td>
                <td>${method.card.brand} •••• ${method.card.last4}</td>
                <td>${when(method.created)}</td>
              </tr>`,
          ),
          'No card saved yet: a payment with this customer’s customerId and setupFutureUsage saves its card here.',
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
          'No payments yet: a payment made with this customer’s customerId, or a paid invoice sent to them, shows here.',
        )}
        <p><a href="${base}/invoices?customer=${customer.id}">Invoices of this customer</a></p>`,
    );
  });
}
