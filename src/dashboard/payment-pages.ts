import type { App } from '../http/server.js';
import { CreateRefundBody, refundReasons } from '../refunds/schemas.js';
import { paymentStatuses } from '../payments/states.js';
import { can } from '../team/permissions.js';
import { html, type SafeHtml } from '../web/html.js';
import { csrfField, field, formError, layout, select, table, when, type FieldErrors } from './layout.js';
import { fieldErrors, page, text, type DashboardDeps, type PageContext } from './kit.js';
import { given, shownAgain, validated } from './validate.js';
import { exportLink } from './csv.js';
import { paymentQuery } from './payment-search.js';
import { disputeTable } from './dispute-pages.js';
import { payersOf } from './people.js';
import {
  amountFields,
  createdRange,
  dateFields,
  refusedFilters,
  listNavigation,
  minorUnitsOf,
  moneyFiltersOf,
  noMatchState,
  statusCountCap,
  statusKept,
  statusTabsOf,
} from './list-filters.js';
import {
  deliveryBadge,
  emptyState,
  moneyCell,
  moneyText,
  personText,
  statusBadge,
  statusWords,
  timeline,
  type StatusTab,
  type TimelineEntry,
  type Tone,
} from './ui.js';

const base = '/dashboard/payments';

/** The tabs always shown; the others appear when they have payments or are selected. */
const alwaysShown = new Set(['succeeded', 'requires_capture', 'failed']);

const tabLabels: Record<string, string> = {
  requires_payment_method: 'Incomplete',
  requires_confirmation: 'Unconfirmed',
  requires_action: 'Needs action',
  requires_capture: 'Uncaptured',
};

/** Payments: list with filters, detail with its timeline, and the refund action (the refund service's). */
export function paymentPages(app: App, deps: DashboardDeps): void {
  page(app, deps, 'GET', '/payments', 'payments.read', async (ctx) => {
    const query = ctx.request.query as Record<string, string>;
    const shared = moneyFiltersOf(query);
    const filters = { ...shared, q: query.q ?? '', customer: query.customer ?? '', orderNo: query.orderNo ?? '' };
    let errors: FieldErrors | undefined;
    let rows: SafeHtml[] = [];
    let tabs: StatusTab[] = [];
    try {
      const { listQuery, search } = paymentQuery(filters, 50);
      const [payments, counts] = await Promise.all([
        deps.payments.list(ctx.merchant, listQuery, search),
        deps.payments.countByStatus(ctx.merchant, createdRange(shared), statusCountCap),
      ]);
      tabs = statusTabsOf({
        statuses: paymentStatuses,
        counts,
        selected: filters.status,
        alwaysShown,
        labels: tabLabels,
      });
      const personOf = await payersOf(deps, ctx, payments.data);
      rows = payments.data.map(
        (payment) =>
          html`<tr>
            ${moneyCell(payment.amount, payment.currency)}
            <td>${statusBadge(payment.displayStatus)}</td>
            <td><a href="${base}/${payment.id}">${payment.description ?? payment.id}</a></td>
            <td>${personText(personOf(payment), payment.customerId)}</td>
            <td class="hide-narrow">${payment.orderNo === null ? '' : String(payment.orderNo)}</td>
            <td>${when(payment.created)}</td>
          </tr>`,
      );
    } catch (err) {
      errors = refusedFilters(err, (refused) => fieldErrors(refused, 'customer'), { customerId: 'customer' });
      ctx.reply.code(400);
    }
    const filtered = Object.entries(filters).some(([name, value]) => name !== 'status' && value !== '');
    const empty = filtered
      ? noMatchState('payments', base)
      : emptyState({
          title: ctx.session.mode === 'test' ? 'No test payments yet' : 'No payments yet',
          body: 'Make a test payment with the API, or send a sample event from your terminal:',
          command: 'npx tessera trigger payment.succeeded',
        });
    return layout(
      { title: 'Payments', session: ctx.session, current: '/payments' },
      html`<h1>Payments</h1>
        ${listNavigation({ path: base, filters, tabs, label: 'Payments by status', now: deps.clock.now() })}
        <form class="filters" method="get" action="${base}" novalidate>
          ${statusKept(shared, errors)}
          ${field({ name: 'q', label: 'Search', value: filters.q, errors, hint: 'Payment id, order number or e-mail' })}
          ${amountFields(shared, errors)}
          ${field({ name: 'customer', label: 'Customer id', value: filters.customer, errors })}
          ${field({ name: 'orderNo', label: 'Order number', value: filters.orderNo, errors })}
          ${dateFields(shared, errors)}
          <button type="submit">Filter</button>
        </form>
        ${formError(errors)} ${exportLink(ctx, '/payments', filters)}
        ${errors ? '' : table(['Amount', 'Status', 'Payment', 'Customer', 'Order', 'Created'], rows, empty, 'Payments')}`,
    );
  });

  const detailPage = async (
    ctx: PageContext,
    id: string,
    extra: { values?: Record<string, string>; errors?: FieldErrors; notice?: string } = {},
  ) => {
    const payment = await deps.payments.retrieve(ctx.merchant, id);
    // Brand and last four digits only (docs/api.md#what-the-service-does): never more of the card.
    const card = payment.paymentMethod
      ? await deps.paymentMethods.retrieve(ctx.merchant, payment.paymentMethod).then(
          (method) => method.card,
          () => null,
        )
      : null;
    const person = (await payersOf(deps, ctx, [payment]))(payment);
    // docs/balances.md: the fee and net of the payment's ledger entry, once it has one.
    const [entry] = deps.ledger
      ? (await deps.ledger.list(ctx.merchant, { source: payment.id, type: 'payment' }, { limit: 1 })).data
      : [];
    // docs/dashboard.md#roles: endpoint URLs and the delivery log are for the roles that see webhooks.
    const seesWebhooks = can(ctx.actor.role, 'webhooks.read');
    const seesEvents = can(ctx.actor.role, 'events.read');
    const mayRefund = can(ctx.actor.role, 'refunds.create');
    // docs/disputes.md: the payment's disputes, for the roles that read disputes.
    const disputes =
      deps.disputes && can(ctx.actor.role, 'disputes.read')
        ? (await deps.disputes.list(ctx.merchant, { limit: 100, paymentId: id })).data
        : null;
    const events = await deps.events.list(ctx.merchant, { limit: 100, objectId: id });
    const entries: TimelineEntry[] = [];
    for (const event of events.data) {
      const deliveries = seesWebhooks
        ? (await deps.webhookDeliveries.listForEvent(ctx.merchant, event.id, { limit: 20 })).data
        : [];
      const outcome = event.type.slice(event.type.indexOf('.') + 1);
      const tone: Tone = outcome === 'succeeded' ? 'good' : outcome === 'failed' ? 'bad' : 'info';
      entries.push({
        when: when(event.created),
        tone,
        title: html`${statusWords(outcome)}
          <span class="muted">·</span>
          ${seesEvents ? html`<a href="/dashboard/developers/events/${event.id}">${event.type}</a>` : event.type}`,
        detail: deliveries.map(
          (delivery) =>
            html`<div>
              ${delivery.kind} → <span class="url">${delivery.url}</span>: ${deliveryBadge(delivery)}
              (${delivery.attempts} ${delivery.attempts === 1 ? 'attempt' : 'attempts'})
            </div>`,
        ),
      });
    }
    entries.push({ when: when(payment.created), title: 'Payment created', tone: 'neutral' });
    const { errors } = extra;
    const values = extra.values ?? {};
    return layout(
      { title: `Payment ${payment.id}`, session: ctx.session, current: '/payments', notice: extra.notice },
      html`<p><a href="${base}">← Payments</a></p>
        <h1>${moneyText(payment.amount, payment.currency)} ${statusBadge(payment.displayStatus)}</h1>
        <dl class="facts card">
          <dt>Id</dt>
          <dd>${payment.id}</dd>
          <dt>Received</dt>
          <dd>${moneyText(payment.amountReceived, payment.currency)}</dd>
          <dt>Refunded</dt>
          <dd>${moneyText(payment.amountRefunded, payment.currency)}</dd>
          ${
            entry
              ? html`<dt>Fee</dt>
                  <dd>
                    ${moneyText(entry.fee, entry.currency)}
                    ${entry.feeDetails.map((line) => html`<span class="muted">(${line.description})</span>`)}
                  </dd>
                  <dt>Net</dt>
                  <dd>${moneyText(entry.net, entry.currency)} <span class="muted">(${entry.status})</span></dd>`
              : ''
          }
          <dt>Card</dt>
          <dd>${card ? `${card.brand} •••• ${card.last4}` : '—'}</dd>
          <dt>Customer</dt>
          <dd>
            ${
              payment.customerId
                ? html`<a href="/dashboard/customers/${payment.customerId}"
                    >${personText(person, payment.customerId)}</a
                  >`
                : personText(person, null)
            }
          </dd>
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
        ${
          disputes && disputes.length > 0
            ? html`<h2>Disputes</h2>
                ${disputeTable(disputes, deps.clock.now(), '')}`
            : ''
        }
        <h2>Timeline</h2>
        ${timeline(entries, 'No events yet: each change of this payment appears here as it happens.')}
        ${
          mayRefund
            ? html`<h2>Refund</h2>
                <form class="card" method="post" action="${base}/${payment.id}/refund" novalidate>
                  ${csrfField(ctx.session.csrfToken)} ${formError(errors)}
                  ${field({ name: 'amount', label: `Amount (${payment.currency})`, value: values.amount, errors, inputmode: 'decimal', hint: 'Leave empty to refund everything that is left' })}
                  ${select({ name: 'reason', label: 'Reason', value: values.reason ?? 'requested_by_customer', errors, choices: refundReasons.map((reason) => [reason, statusWords(reason)] as const) })}
                  ${field({ name: 'note', label: 'Note', value: values.note, errors, hint: 'Required with reason “other”' })}
                  <button type="submit">Refund</button>
                </form>`
            : ''
        }`,
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
      const payment = await deps.payments.retrieve(ctx.merchant, id);
      // The form takes major units, as staff read money; the refund service takes minor units.
      const amount = values.amount ? minorUnitsOf(values.amount, payment.currency, 'amount').toString() : '';
      const input = validated<CreateRefundBody>(CreateRefundBody, { paymentId: id, ...given({ ...values, amount }) });
      const refund = await deps.refunds.create(ctx.merchant, input);
      await deps.team.audit(ctx.actor, 'refund.created', refund.id);
      return detailPage(ctx, id, { notice: `Refund ${refund.id} created (${refund.status}).` });
    } catch (err) {
      ctx.reply.code(400);
      const refused = err as { field?: string; message?: string };
      const errors = refused.field ? { [refused.field]: refused.message ?? '' } : fieldErrors(err, 'amount');
      return detailPage(ctx, id, { values: shownAgain(values), errors });
    }
  });
}
