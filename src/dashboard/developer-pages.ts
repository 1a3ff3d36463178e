import type { App } from '../http/server.js';
import { CreateWebhookEndpointBody, UpdateWebhookEndpointBody, signatureCases } from '../webhooks/endpoints/schemas.js';
import type { WebhookEndpoint } from '../webhooks/endpoints/schemas.js';
import type { WebhookDelivery } from '../webhooks/deliveries/schemas.js';
import { html, type SafeHtml } from '../web/html.js';
import { csrfField, field, formError, layout, select, table, when, type FieldErrors } from './layout.js';
import { fieldErrors, page, redirect, text, type DashboardDeps, type PageContext } from './kit.js';
import { given, shownAgain, validated } from './validate.js';
import { sendingAddressesSection } from './sending-addresses.js';
import { deliveryBadge, emptyState } from './ui.js';
import { tokenSection, webhookTokenPages, type TokenView } from './webhook-token-pages.js';
import { checkSection, webhookCheckPages, type CheckView } from './webhook-check-pages.js';
import {
  healthBadge,
  healthFacts,
  recoverSection,
  webhookRecoverPages,
  type RecoverView,
} from './webhook-recover-pages.js';

const base = '/dashboard/developers';

/** docs/webhooks.md#what-is-sent: the letter case of the hex Signature header, settable per endpoint. */
const signatureCaseChoices = signatureCases.map(
  (letterCase) => [letterCase, letterCase === 'upper' ? 'Upper-case hex (default)' : 'Lower-case hex'] as const,
);
const formatChoices = [
  ['moneycollect', 'moneycollect: Request-Time and Signature headers (default)'],
  ['standard', 'Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature'],
] as const;

/** Developers (docs/webhooks.md#endpoints-and-tokens, docs/dashboard.md#roles): webhook endpoints, their tokens, go-live checks and delivery logs. */
export function developerPages(app: App, deps: DashboardDeps): void {
  const listPage = async (ctx: PageContext, values: Record<string, string> = {}, errors?: FieldErrors) => {
    const endpoints = await deps.webhookEndpoints.list(ctx.merchant, { limit: 100 });
    const rows = endpoints.data.map(
      (endpoint) =>
        html`<tr>
          <td>
            <a href="${base}/webhooks/${endpoint.id}"
              >${endpoint.kind === 'dynamic' ? 'notifyUrl (dynamic)' : endpoint.url}</a
            >
          </td>
          <td class="hide-narrow">${endpoint.description ?? ''}</td>
          ${healthBadge(endpoint, 'td')}
          <td class="hide-narrow">${endpoint.enabledEvents.join(', ')}</td>
        </tr>`,
    );
    return layout(
      { title: 'Webhook endpoints', session: ctx.session, current: '/developers/webhooks' },
      html`<h1>Webhook endpoints</h1>
        ${table(['Endpoint', 'Description', 'Health', 'Events'], rows, html``)}
        ${
          // The list always holds the built-in dynamic endpoint (it signs the deliveries to
          // payments' notifyUrl): "nothing yet" is no endpoint of the merchant's own.
          endpoints.data.some((endpoint) => endpoint.kind === 'static')
            ? ''
            : emptyState({
                title: 'No endpoint of your own yet',
                body: html`Events go only to the notifyUrl of each payment. <a href="#f-url">Add an endpoint</a> below
                  to receive every event at one URL, or forward them to your computer while you build:`,
                command: 'npx tessera listen --forward-to http://localhost:3000/webhooks',
              })
        }
        ${sendingAddressesSection(deps.sendingAddresses)}
        <h2>Add an endpoint</h2>
        <form class="card" method="post" action="${base}/webhooks" novalidate>
          ${csrfField(ctx.session.csrfToken)} ${formError(errors)}
          ${field({ name: 'url', label: 'URL', type: 'url', value: values.url, errors, required: true, hint: 'https://… where the notifications are sent' })}
          ${field({ name: 'description', label: 'Description', value: values.description, errors })}
          ${field({ name: 'enabledEvents', label: 'Event types', value: values.enabledEvents ?? '*', errors, hint: 'Comma-separated codes, or * for every type' })}
          ${select({ name: 'signatureCase', label: 'Signature letter case', value: values.signatureCase ?? 'upper', errors, choices: signatureCaseChoices })}
          <button type="submit">Add endpoint</button>
        </form>`,
    );
  };

  page(app, deps, 'GET', '/developers/webhooks', 'webhooks.read', (ctx) => listPage(ctx));

  page(app, deps, 'POST', '/developers/webhooks', 'webhooks.manage', async (ctx) => {
    const values = {
      url: text(ctx.form, 'url'),
      description: text(ctx.form, 'description'),
      enabledEvents: text(ctx.form, 'enabledEvents'),
      signatureCase: text(ctx.form, 'signatureCase'),
    };
    try {
      const input = validated<CreateWebhookEndpointBody>(CreateWebhookEndpointBody, {
        ...given({ url: values.url, description: values.description, signatureCase: values.signatureCase }),
        ...(values.enabledEvents.trim() ? { enabledEvents: splitList(values.enabledEvents) } : {}),
      });
      const created = await deps.webhookEndpoints.create(ctx.merchant, input);
      await deps.team.audit(ctx.actor, 'webhook_endpoint.created', created.id);
      redirect(ctx.reply, `/developers/webhooks/${created.id}`);
    } catch (err) {
      ctx.reply.code(400);
      return listPage(ctx, shownAgain(values), fieldErrors(err, 'url'));
    }
  });

  const detailPage = async (
    ctx: PageContext,
    id: string,
    extra: {
      token?: TokenView;
      values?: Record<string, string>;
      errors?: FieldErrors;
      notice?: string;
      check?: CheckView;
      recover?: RecoverView;
    } = {},
  ) => {
    const endpoint = await deps.webhookEndpoints.retrieve(ctx.merchant, id);
    const { errors } = extra;
    const values = extra.values ?? {
      url: endpoint.url ?? '',
      description: endpoint.description ?? '',
      enabledEvents: endpoint.enabledEvents.join(', '),
      status: endpoint.status,
      legacyNotifications: endpoint.legacyNotifications ? 'on' : 'off',
      signatureCase: endpoint.signatureCase,
      format: endpoint.format,
    };
    return layout(
      { title: `Endpoint ${endpoint.id}`, session: ctx.session, current: '/developers/webhooks', notice: extra.notice },
      html`<p><a href="${base}/webhooks">← Webhook endpoints</a></p>
        <h1>${endpoint.kind === 'dynamic' ? "The payments' notifyUrl (dynamic endpoint)" : endpoint.url}</h1>
        <dl class="facts card">
          <dt>Id</dt>
          <dd>${endpoint.id}</dd>
          ${healthFacts(endpoint)}
          <dt>Events</dt>
          <dd>${endpoint.enabledEvents.join(', ')}</dd>
          <dt>Legacy notifications</dt>
          <dd>${endpoint.legacyNotifications ? 'on' : 'off'}</dd>
          <dt>Signature letter case</dt>
          <dd>${endpoint.signatureCase}</dd>
          <dt>Format</dt>
          <dd>${endpoint.format === 'standard' ? 'Standard Webhooks' : 'moneycollect (Request-Time, Signature)'}</dd>
          <dt>Signature algorithm</dt>
          <dd>${endpoint.signatureAlgorithm}</dd>
          <dt>Created</dt>
          <dd>${when(endpoint.created)}</dd>
        </dl>
        ${tokenSection(ctx, endpoint, extra.token)} ${recoverSection(ctx, deps, endpoint, extra.recover)}
        ${editForm(ctx, endpoint, values, errors)} ${await checkSection(ctx, deps, endpoint, extra.check)}
        <h2>Deliveries</h2>
        ${await deliveryLog(ctx, endpoint.id)}`,
    );
  };

  const editForm = (
    ctx: PageContext,
    endpoint: WebhookEndpoint,
    values: Record<string, string>,
    errors?: FieldErrors,
  ) =>
    html`<h2>Settings</h2>
      <form class="card" method="post" action="${base}/webhooks/${endpoint.id}" novalidate>
        ${csrfField(ctx.session.csrfToken)} ${formError(endpoint.kind === 'dynamic' ? asFormError(errors) : errors)}
        ${
          endpoint.kind === 'static'
            ? html`${field({ name: 'url', label: 'URL', type: 'url', value: values.url, errors })}
              ${field({ name: 'description', label: 'Description', value: values.description, errors })}
              ${field({ name: 'enabledEvents', label: 'Event types', value: values.enabledEvents, errors, hint: 'Comma-separated codes, or *' })}`
            : html`<p class="hint">
                This endpoint sends every event of a payment to the payment's notifyUrl: its URL and event types are the
                payment's.
              </p>`
        }
        ${select({
          name: 'status',
          label: 'Status',
          value: values.status,
          errors,
          choices: [
            ['enabled', 'Enabled'],
            ['disabled', 'Disabled'],
          ],
        })}
        ${select({
          name: 'legacyNotifications',
          label: 'Legacy notifications (plain codes)',
          value: values.legacyNotifications,
          errors,
          choices: [
            ['on', 'On'],
            ['off', 'Off'],
          ],
        })}
        ${select({ name: 'signatureCase', label: 'Signature letter case', value: values.signatureCase, errors, choices: signatureCaseChoices })}
        ${select({ name: 'format', label: 'Format', value: values.format, errors, choices: formatChoices })}
        <button type="submit">Save</button>
      </form>
      ${
        endpoint.kind === 'static'
          ? html`<form method="post" action="${base}/webhooks/${endpoint.id}/delete">
              ${csrfField(ctx.session.csrfToken)}<button class="danger" type="submit">Delete endpoint</button>
            </form>`
          : ''
      }`;

  // One row per event (docs/decisions/0014-legacy-opt-in-and-sequence.md: each event once): its endpoint_ notification, with the legacy
  // kind, when the endpoint receives it, as a line of the same row.
  const deliveryLog = async (ctx: PageContext, endpointId: string) => {
    const deliveries = await deps.webhookDeliveries.list(ctx.merchant, { endpointId, limit: 40 });
    const byEvent = new Map<string, WebhookDelivery[]>();
    for (const delivery of deliveries.data) {
      const group = byEvent.get(delivery.eventId);
      if (group) group.push(delivery);
      else byEvent.set(delivery.eventId, [delivery]);
    }
    const rows: SafeHtml[] = [];
    for (const group of [...byEvent.values()].slice(0, 20)) {
      const main = group.find((delivery) => delivery.kind === 'endpoint') ?? group[0]!;
      const legacy = group.find((delivery) => delivery.kind === 'legacy');
      const attempts = await deps.webhookDeliveries.listAttempts(ctx.merchant, main.id);
      rows.push(
        html`<tr>
          <td>${when(main.created)}<br /><a href="${base}/events/${main.eventId}">${main.type}</a></td>
          <td>
            ${deliveryBadge(main)}
            ${legacy ? html`<br /><span class="hint">legacy ${legacy.type}: ${deliveryBadge(legacy)}</span>` : ''}
          </td>
          <td>
            ${attempts.data.map(
              (attempt) =>
                html`<div>
                  #${attempt.attemptNumber} ${when(attempt.attemptedAt)} · ${attempt.httpStatus ?? 'no answer'} ·
                  ${attempt.durationMs} ms ${attempt.error ? html`· ${attempt.error}` : ''}
                  ${attempt.responseExcerpt ? html`<pre>${attempt.responseExcerpt}</pre>` : ''}
                </div>`,
            )}
          </td>
          <td>
            <form method="post" action="${base}/deliveries/${main.id}/resend">
              ${csrfField(ctx.session.csrfToken)}<button
                class="secondary"
                type="submit"
                aria-label="Resend delivery ${main.id}"
              >
                Resend
              </button>
            </form>
          </td>
        </tr>`,
      );
    }
    return table(
      ['Event', 'Status', 'Attempts', ''],
      rows,
      emptyState({
        title: 'Nothing sent to this endpoint yet',
        body: 'Every event it listens to is sent here as it happens. Run the go-live check above to try it with test deliveries, or make an event from your terminal:',
        command: 'npx tessera trigger payment.succeeded',
      }),
    );
  };

  page(app, deps, 'GET', '/developers/webhooks/:id', 'webhooks.read', (ctx) =>
    detailPage(ctx, (ctx.request.params as { id: string }).id),
  );

  page(app, deps, 'POST', '/developers/webhooks/:id', 'webhooks.manage', async (ctx) => {
    const id = (ctx.request.params as { id: string }).id;
    const values = {
      url: text(ctx.form, 'url'),
      description: text(ctx.form, 'description'),
      enabledEvents: text(ctx.form, 'enabledEvents'),
      status: text(ctx.form, 'status'),
      legacyNotifications: text(ctx.form, 'legacyNotifications'),
      signatureCase: text(ctx.form, 'signatureCase'),
      format: text(ctx.form, 'format'),
    };
    // The dynamic endpoint's form has no url, description or event types: what is not sent is not changed.
    const sent = (name: string) => ctx.form[name] !== undefined;
    try {
      const changes = validated<UpdateWebhookEndpointBody>(UpdateWebhookEndpointBody, {
        ...given({
          url: values.url,
          status: values.status,
          signatureCase: values.signatureCase,
          format: values.format,
        }),
        ...(sent('description') ? { description: values.description } : {}),
        ...(sent('enabledEvents') ? { enabledEvents: splitList(values.enabledEvents) } : {}),
        legacyNotifications: values.legacyNotifications === 'on',
      });
      const before = await deps.webhookEndpoints.retrieve(ctx.merchant, id);
      const after = await deps.webhookEndpoints.update(ctx.merchant, id, changes);
      await deps.team.audit(ctx.actor, 'webhook_endpoint.updated', id);
      // docs/webhooks.md#endpoint-health: re-enabling offers to recover what was missed, from when it began failing.
      if (before.status === 'disabled' && after.status === 'enabled') {
        return detailPage(ctx, id, {
          notice: 'Saved. The endpoint is enabled again: recover the events it missed below.',
          recover: { values: { since: deps.recovery.suggestedSince(before.failingSince) } },
        });
      }
      return detailPage(ctx, id, { notice: 'Saved.' });
    } catch (err) {
      ctx.reply.code(400);
      return detailPage(ctx, id, { values: shownAgain(values), errors: fieldErrors(err, 'url') });
    }
  });

  page(app, deps, 'POST', '/developers/webhooks/:id/delete', 'webhooks.manage', async (ctx) => {
    const id = (ctx.request.params as { id: string }).id;
    await deps.webhookEndpoints.delete(ctx.merchant, id);
    await deps.team.audit(ctx.actor, 'webhook_endpoint.deleted', id);
    redirect(ctx.reply, '/developers/webhooks');
  });

  webhookTokenPages(app, deps, (ctx, id, token) => detailPage(ctx, id, { token }));
  webhookCheckPages(app, deps, (ctx, id, check) => detailPage(ctx, id, { check }));
  webhookRecoverPages(app, deps, (ctx, id, recover) => detailPage(ctx, id, { recover }));

  page(app, deps, 'POST', '/developers/deliveries/:id/resend', 'webhooks.resend', async (ctx) => {
    const id = (ctx.request.params as { id: string }).id;
    const delivery = await deps.webhookDeliveries.resendDelivery(ctx.merchant, id);
    await deps.team.audit(ctx.actor, 'webhook_delivery.resent', id);
    redirect(ctx.reply, `/developers/webhooks/${delivery.endpointId}`);
  });
}

/** The dynamic endpoint's form shows three fields: a refusal of any other is shown above the form. */
function asFormError(errors: FieldErrors | undefined): FieldErrors | undefined {
  const other = Object.entries(errors ?? {}).find(
    ([name]) => !['status', 'legacyNotifications', 'signatureCase', 'format'].includes(name),
  );
  return other ? { ...errors, form: other[1] } : errors;
}

function splitList(value: string): string[] {
  return value
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
}
