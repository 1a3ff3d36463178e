import type { App } from '../http/server.js';
import { CreateInvoiceBody, collectionMethods } from '../invoices/schemas.js';
import { invoiceStatuses } from '../invoices/states.js';
import { normalizeCurrency } from '../money.js';
import { can } from '../team/permissions.js';
import { html, type SafeHtml } from '../web/html.js';
import { csrfField, field, formError, layout, money, select, table, when, type FieldErrors } from './layout.js';
import { fieldErrors, page, redirect, text, type DashboardDeps, type PageContext } from './kit.js';
import { given, shownAgain, validated } from './validate.js';
import { exportLink } from './csv.js';
import {
  amountFields,
  createdRange,
  dateFields,
  refusedFilters,
  listNavigation,
  minorUnitsOf,
  moneyFiltersOf,
  noMatchState,
  refuse,
  statusCountCap,
  statusKept,
  statusTabsOf,
} from './list-filters.js';
import { invoiceQuery } from './list-queries.js';
import { emptyState, moneyCell, personText, statusBadge, type StatusTab } from './ui.js';

const base = '/dashboard/invoices';
/** Line item rows of the draft form; empty rows are left out. */
const lineRows = [0, 1, 2] as const;
/** The status tabs always shown; the others appear when they have invoices or are selected. */
const alwaysShown = new Set(['draft', 'open', 'paid']);

/**
 * Invoices: list, detail, create a draft, finalize, send, void — each action the invoice service's.
 * docs/dashboard.md#roles: Support may send again an invoice already sent (resend), not send it the first time.
 */
export function invoicePages(app: App, deps: DashboardDeps): void {
  const listPage = async (ctx: PageContext, values: Record<string, string> = {}, errors?: FieldErrors) => {
    const query = ctx.request.query as Record<string, string>;
    const shared = moneyFiltersOf(query);
    const filters = { customer: query.customer ?? '', ...shared };
    let rows: SafeHtml[] = [];
    let tabs: StatusTab[] = [];
    let filterErrors: FieldErrors | undefined;
    try {
      const { listQuery, search } = invoiceQuery(filters, 50);
      const [listed, counts] = await Promise.all([
        deps.invoices.list(ctx.merchant, listQuery, search),
        deps.invoices.countByStatus(ctx.merchant, createdRange(shared), statusCountCap),
      ]);
      tabs = statusTabsOf({ statuses: invoiceStatuses, counts, selected: shared.status, alwaysShown });
      const invoices = listed.data;
      const people = await deps.customers.peopleOf(
        ctx.merchant,
        invoices.map((invoice) => invoice.customerId),
      );
      rows = invoices.map(
        (invoice) =>
          html`<tr>
            ${moneyCell(invoice.amountDue, invoice.currency)}
            <td>${statusBadge(invoice.status)}</td>
            <td><a href="${base}/${invoice.id}">${invoice.number ?? invoice.id}</a></td>
            <td>
              <a href="/dashboard/customers/${invoice.customerId}"
                >${personText(people.get(invoice.customerId), invoice.customerId)}</a
              >
            </td>
            <td>${when(invoice.created)}</td>
          </tr>`,
      );
    } catch (err) {
      filterErrors = refusedFilters(err, (refused) => fieldErrors(refused, 'customer'), { customerId: 'customer' });
      ctx.reply.code(400);
    }
    const manage = can(ctx.actor.role, 'invoices.manage');
    const filtered = Object.entries(filters).some(([name, value]) => name !== 'status' && value !== '');
    return layout(
      { title: 'Invoices', session: ctx.session, current: '/invoices' },
      html`<h1>Invoices</h1>
        ${listNavigation({ path: base, filters, tabs, label: 'Invoices by status', now: deps.clock.now() })}
        <form class="filters" method="get" action="${base}" novalidate>
          ${statusKept(shared, filterErrors)}
          ${field({ name: 'customer', label: 'Customer id', value: filters.customer, errors: filterErrors })}
          ${amountFields(shared, filterErrors)} ${dateFields(shared, filterErrors)}
          <button type="submit">Filter</button>
        </form>
        ${formError(filterErrors)} ${exportLink(ctx, '/invoices', filters)}
        ${
          filterErrors
            ? ''
            : table(
                ['Amount due', 'Status', 'Invoice', 'Customer', 'Created'],
                rows,
                filtered
                  ? noMatchState('invoices', base)
                  : emptyState({
                      title: shared.status ? `No ${shared.status} invoices` : 'No invoices yet',
                      body: manage
                        ? 'Create a draft below, or with POST /api/services/v1/invoices/create.'
                        : 'Invoices appear here once an Owner or Administrator creates them.',
                    }),
                'Invoices',
              )
        }
        ${manage ? draftForm(ctx, values, errors) : ''}`,
    );
  };

  const draftForm = (ctx: PageContext, values: Record<string, string>, errors?: FieldErrors) =>
    html`<h2>Create a draft</h2>
      <form class="card" method="post" action="${base}" novalidate>
        ${csrfField(ctx.session.csrfToken)} ${formError(errors)}
        ${field({ name: 'customerId', label: 'Customer id', value: values.customerId, errors, required: true })}
        ${field({ name: 'currency', label: 'Currency', value: values.currency ?? 'USD', errors, required: true })}
        ${select({ name: 'collectionMethod', label: 'Collection', value: values.collectionMethod ?? 'send_invoice', errors, choices: collectionMethods.map((method) => [method, method.replace('_', ' ')] as const) })}
        ${field({ name: 'daysUntilDue', label: 'Days until due', value: values.daysUntilDue, errors, inputmode: 'numeric', hint: 'Send invoice only; 30 when left empty' })}
        ${field({ name: 'description', label: 'Description', value: values.description, errors })}
        <fieldset>
          <legend>Line items</legend>
          ${lineRows.map(
            (index) =>
              html`<div class="filters">
                ${field({ name: `lineItems[${index}].description`, label: `Item ${index + 1}`, value: values[`lineItems[${index}].description`], errors })}
                ${field({ name: `lineItems[${index}].amount`, label: 'Unit price', value: values[`lineItems[${index}].amount`], errors, inputmode: 'decimal', hint: 'In the currency above, e.g. 25.00' })}
                ${field({ name: `lineItems[${index}].quantity`, label: 'Quantity', value: values[`lineItems[${index}].quantity`], errors, inputmode: 'numeric' })}
              </div>`,
          )}
        </fieldset>
        <button type="submit">Create draft</button>
      </form>`;

  page(app, deps, 'GET', '/invoices', 'invoices.read', (ctx) => listPage(ctx));

  page(app, deps, 'POST', '/invoices', 'invoices.manage', async (ctx) => {
    const values: Record<string, string> = {};
    for (const name of ['customerId', 'currency', 'collectionMethod', 'daysUntilDue', 'description'])
      values[name] = text(ctx.form, name).trim();
    for (const index of lineRows)
      for (const part of ['description', 'amount', 'quantity'])
        values[`lineItems[${index}].${part}`] = text(ctx.form, `lineItems[${index}].${part}`).trim();
    try {
      // Staff type unit prices in major units of the invoice's currency (docs/dashboard.md#pages: 25.00 EUR,
      // 2500 JPY); the invoice service takes minor units.
      const unitPrice = (index: number): string | undefined => {
        const typed = values[`lineItems[${index}].amount`] ?? '';
        if (!typed) return undefined;
        const currency = normalizeCurrency(values.currency ?? '');
        if (!currency) throw refuse('currency', 'currency must be an ISO 4217 code such as USD or EUR');
        const name = `lineItems[${index}].amount`;
        return minorUnitsOf(typed, currency, name, `Unit price of item ${index + 1}`).toString();
      };
      const lineItems = lineRows
        .map((index) =>
          given({
            description: values[`lineItems[${index}].description`],
            amount: unitPrice(index),
            quantity: values[`lineItems[${index}].quantity`],
          }),
        )
        .filter((item) => Object.keys(item).length > 0);
      const days = values.daysUntilDue ?? '';
      const input = validated<CreateInvoiceBody>(CreateInvoiceBody, {
        ...given({
          customerId: values.customerId,
          currency: values.currency,
          collectionMethod: values.collectionMethod,
          description: values.description,
        }),
        // A form sends text; the API's integer field gets a number when the text is one.
        ...(days ? { daysUntilDue: /^\d{1,6}$/.test(days) ? Number(days) : days } : {}),
        lineItems,
      });
      const invoice = await deps.invoices.create(ctx.merchant, input);
      await deps.team.audit(ctx.actor, 'invoice.created', invoice.id);
      redirect(ctx.reply, `/invoices/${invoice.id}`);
    } catch (err) {
      ctx.reply.code(400);
      const errors = refusedFilters(err, (refused) => fieldErrors(refused, 'customerId'));
      // A line item refused as a whole (`lineItems`) is shown beside the first row.
      if (errors.lineItems) errors['lineItems[0].description'] = errors.lineItems;
      return listPage(ctx, shownAgain(values), errors);
    }
  });

  /** Whether the invoice has been e-mailed before: sending it again is a resend. */
  const sentBefore = async (ctx: PageContext, id: string) =>
    (await deps.events.list(ctx.merchant, { limit: 1, objectId: id, type: 'Invoice.sent' })).data.length > 0;

  const detailPage = async (ctx: PageContext, id: string, extra: { errors?: FieldErrors; notice?: string } = {}) => {
    const invoice = await deps.invoices.retrieve(ctx.merchant, id);
    const resend = await sentBefore(ctx, id);
    const role = ctx.actor.role;
    const action = (name: string, label: string, style = '') =>
      html`<form method="post" action="${base}/${invoice.id}/${name}">
        ${csrfField(ctx.session.csrfToken)}<button class="${style}" type="submit">${label}</button>
      </form>`;
    const actions = [
      invoice.status === 'draft' && can(role, 'invoices.manage') ? action('finalize', 'Finalize') : '',
      invoice.status === 'open' &&
      invoice.collectionMethod === 'send_invoice' &&
      can(role, resend ? 'invoices.resend' : 'invoices.manage')
        ? action('send', resend ? 'Send again' : 'Send')
        : '',
      ['open', 'uncollectible'].includes(invoice.status) && can(role, 'invoices.manage')
        ? action('void', 'Void', 'danger')
        : '',
    ];
    const people = await deps.customers.peopleOf(ctx.merchant, [invoice.customerId]);
    return layout(
      {
        title: `Invoice ${invoice.number ?? invoice.id}`,
        session: ctx.session,
        current: '/invoices',
        notice: extra.notice,
      },
      html`<p><a href="${base}">← Invoices</a></p>
        <h1>
          ${invoice.number ?? 'Draft'} · ${money(invoice.amountDue, invoice.currency)} ${statusBadge(invoice.status)}
        </h1>
        ${formError(extra.errors)}
        <div class="actions">${actions}</div>
        <dl class="facts card">
          <dt>Id</dt>
          <dd>${invoice.id}</dd>
          <dt>Customer</dt>
          <dd>
            <a href="/dashboard/customers/${invoice.customerId}"
              >${personText(people.get(invoice.customerId), invoice.customerId)}</a
            >
          </dd>
          <dt>Collection</dt>
          <dd>${invoice.collectionMethod.replace('_', ' ')}</dd>
          <dt>Paid</dt>
          <dd>${money(invoice.amountPaid, invoice.currency)}</dd>
          <dt>Remaining</dt>
          <dd>${money(invoice.amountRemaining, invoice.currency)}</dd>
          <dt>Due</dt>
          <dd>${when(invoice.dueDate)}</dd>
          <dt>Payment</dt>
          <dd>
            ${invoice.paymentId ? html`<a href="/dashboard/payments/${invoice.paymentId}">${invoice.paymentId}</a>` : '—'}
          </dd>
          <dt>Sent</dt>
          <dd>${resend ? 'yes' : 'not yet'}</dd>
          <dt>Created</dt>
          <dd>${when(invoice.created)}</dd>
        </dl>
        <h2>Line items</h2>
        ${table(
          ['Description', 'Quantity', 'Unit price'],
          invoice.lineItems.map(
            (item) =>
              html`<tr>
                <td>${item.description}</td>
                <td class="num">${item.quantity}</td>
                <td class="num">${money(item.amount, invoice.currency)}</td>
              </tr>`,
          ),
          'No line items yet: add one to the draft before you finalize it.',
        )}`,
    );
  };

  page(app, deps, 'GET', '/invoices/:id', 'invoices.read', (ctx) =>
    detailPage(ctx, (ctx.request.params as { id: string }).id),
  );

  /** An action refused by the service (wrong state, no e-mail) is shown on the invoice's page. */
  const act = async (ctx: PageContext, name: 'finalize' | 'send' | 'void', done: string) => {
    const id = (ctx.request.params as { id: string }).id;
    try {
      const invoice = await deps.invoices[name](ctx.merchant, id);
      await deps.team.audit(ctx.actor, `invoice.${name}`, invoice.id);
      return detailPage(ctx, id, { notice: done });
    } catch (err) {
      ctx.reply.code(400);
      const errors = fieldErrors(err);
      return detailPage(ctx, id, { errors: { form: Object.values(errors)[0] ?? '' } });
    }
  };

  page(app, deps, 'POST', '/invoices/:id/finalize', 'invoices.manage', (ctx) => act(ctx, 'finalize', 'Finalized.'));
  page(app, deps, 'POST', '/invoices/:id/void', 'invoices.manage', (ctx) => act(ctx, 'void', 'Voided.'));
  // Sending needs invoices.manage the first time and invoices.resend after: checked here, audited when refused.
  page(app, deps, 'POST', '/invoices/:id/send', 'invoices.read', async (ctx) => {
    const resend = await sentBefore(ctx, (ctx.request.params as { id: string }).id);
    await deps.team.require(ctx.actor, resend ? 'invoices.resend' : 'invoices.manage');
    return act(ctx, 'send', resend ? 'Sent again.' : 'Sent.');
  });
}
