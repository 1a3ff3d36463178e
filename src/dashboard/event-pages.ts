import type { App } from '../http/server.js';
import { ListEventsQuery } from '../events/schemas.js';
import { deliveryBadge, emptyState } from './ui.js';
import { html, type SafeHtml } from '../web/html.js';
import { field, formError, layout, table, when, type FieldErrors } from './layout.js';
import { fieldErrors, page, type DashboardDeps } from './kit.js';
import { given, validated } from './validate.js';

const base = '/dashboard/developers';

/** Events (issue 11): the list filtered by type and object id, and each event's body and deliveries. */
export function eventPages(app: App, deps: DashboardDeps): void {
  page(app, deps, 'GET', '/developers/events', 'events.read', async (ctx) => {
    const query = ctx.request.query as Record<string, string>;
    const filters = { type: query.type ?? '', objectId: (query.objectId ?? '').trim() };
    let errors: FieldErrors | undefined;
    let rows: SafeHtml[] = [];
    try {
      // The event service's own filters, checked by the API's schema (the same limits, the same messages).
      const listQuery = validated<ListEventsQuery>(
        ListEventsQuery,
        { limit: 50, ...given({ type: filters.type, objectId: filters.objectId }) },
        'querystring',
      );
      const events = await deps.events.list(ctx.merchant, listQuery);
      rows = events.data.map(
        (event) =>
          html`<tr>
            <td><a href="${base}/events/${event.id}">${event.id}</a></td>
            <td>${event.type}</td>
            <td class="hide-narrow">${objectIdOf(event.data)}</td>
            <td>${when(event.created)}</td>
          </tr>`,
      );
    } catch (err) {
      errors = fieldErrors(err, 'type');
      ctx.reply.code(400);
    }
    return layout(
      { title: 'Events', session: ctx.session, current: '/developers/events' },
      html`<h1>Events</h1>
        <form class="filters" method="get" action="${base}/events" novalidate>
          ${field({ name: 'type', label: 'Type', value: filters.type, errors, hint: 'e.g. payment.succeeded' })}
          ${field({ name: 'objectId', label: 'Object id', value: filters.objectId, errors, hint: 'e.g. a payment id' })}
          <button type="submit">Filter</button>
        </form>
        ${formError(errors)}
        ${table(
          ['Event', 'Type', 'Object', 'Created'],
          rows,
          filters.type || filters.objectId
            ? emptyState({
                title: 'No events match these filters',
                body: html`<a href="${base}/events">Show every event</a>`,
              })
            : emptyState({
                title: 'No events yet',
                body: 'Events are written when payments, refunds and invoices change. Make one from your terminal:',
                command: 'npx tessera trigger payment.succeeded',
              }),
          'Events',
        )}`,
    );
  });

  page(app, deps, 'GET', '/developers/events/:id', 'events.read', async (ctx) => {
    const id = (ctx.request.params as { id: string }).id;
    const event = await deps.events.retrieve(ctx.merchant, id);
    const deliveries = await deps.webhookDeliveries.listForEvent(ctx.merchant, id, { limit: 50 });
    const rows = deliveries.data.map(
      (delivery) =>
        html`<tr>
          <td><a href="${base}/webhooks/${delivery.endpointId}">${delivery.url}</a></td>
          <td>${delivery.kind}</td>
          <td>${deliveryBadge(delivery)}</td>
          <td>${delivery.attempts}</td>
        </tr>`,
    );
    return layout(
      { title: `Event ${event.id}`, session: ctx.session, current: '/developers/events' },
      html`<h1>${event.type}</h1>
        <p>${event.id} · ${when(event.created)}</p>
        <h2>Body</h2>
        <pre>${JSON.stringify(event, null, 2)}</pre>
        <h2>Deliveries</h2>
        ${table(
          ['Target', 'Kind', 'Status', 'Attempts'],
          rows,
          emptyState({
            title: 'Not sent to any endpoint',
            body: html`No endpoint listened for ${event.type} when it happened.
              <a href="${base}/webhooks">Add an endpoint</a> for it, then send the event again from your terminal:`,
            command: `npx tessera events resend ${event.id}`,
          }),
        )}`,
    );
  });
}

function objectIdOf(data: unknown): string {
  const id = (data as { id?: unknown } | null)?.id;
  return typeof id === 'string' ? id : '';
}
