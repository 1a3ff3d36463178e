import { DomainError } from '../core/errors.js';
import type { App } from '../http/server.js';
import { statusOf } from '../http/error-status.js';
import type { WebhookEndpoint } from '../webhooks/endpoints/schemas.js';
import { RecoverBody, type Recovery } from '../webhooks/recover/schemas.js';
import { html, type SafeHtml } from '../web/html.js';
import { csrfField, field, formError, when, type FieldErrors } from './layout.js';
import { fieldErrors, page, text, type DashboardDeps, type PageContext } from './kit.js';
import { given, validated } from './validate.js';

/*
 * Endpoint health and recover on the dashboard (issue 20, docs/webhooks.md#endpoint-health): the health badge of the
 * endpoint lists and pages (a failing endpoint is never shown green), and the recover form of the
 * endpoint page.
 */

const base = '/dashboard/developers';

type Health = WebhookEndpoint['health'];

/** The page kit's status colors: green only when healthy. */
const healthClass: Record<Health, string> = {
  healthy: 'status-enabled',
  failing: 'status-failed',
  disabled: 'status-disabled',
};

/** "healthy", "failing since …", "disabled (HTTP 410)": the badge's words. */
export function healthLabel(endpoint: Pick<WebhookEndpoint, 'health' | 'failingSince' | 'disabledReason'>): string {
  if (endpoint.health === 'failing') return `failing since ${when(endpoint.failingSince)}`;
  if (endpoint.health === 'disabled' && endpoint.disabledReason === 'gone') return 'disabled (it answered HTTP 410)';
  if (endpoint.health === 'disabled' && endpoint.disabledReason === 'failing') return 'disabled (failing too long)';
  return endpoint.health;
}

export function healthBadge(
  endpoint: Pick<WebhookEndpoint, 'health' | 'failingSince' | 'disabledReason'>,
  tag: 'td' | 'dd' | 'span' = 'span',
): SafeHtml {
  const label = healthLabel(endpoint);
  const css = healthClass[endpoint.health];
  if (tag === 'td') return html`<td class="${css}">${label}</td>`;
  if (tag === 'dd') return html`<dd class="${css}">${label}</dd>`;
  return html`<span class="${css}">${label}</span>`;
}

/** The facts of the endpoint page about its health. */
export function healthFacts(endpoint: WebhookEndpoint): SafeHtml {
  return html`<dt>Health</dt>
    ${healthBadge(endpoint, 'dd')}
    ${
      endpoint.lastError
        ? html`<dt>Last error</dt>
            <dd>${endpoint.lastError}</dd>`
        : ''
    }
    <dt>Next attempt</dt>
    <dd>${endpoint.nextAttemptAt ? when(endpoint.nextAttemptAt) : 'none scheduled'}</dd>`;
}

/** What the endpoint page shows of recover: the form's values, its errors, the result just made. */
export interface RecoverView {
  values?: Record<string, string>;
  errors?: FieldErrors;
  result?: Recovery;
}

/** The "Recover missed events" section of the endpoint page. */
export function recoverSection(
  ctx: PageContext,
  deps: DashboardDeps,
  endpoint: WebhookEndpoint,
  view: RecoverView = {},
): SafeHtml {
  const { errors, result } = view;
  if (endpoint.status !== 'enabled') {
    return html`<h2 id="recover">Recover missed events</h2>
      ${formError(errors)}
      <p class="card">
        This endpoint is disabled and receives nothing. Enable it (Settings, below), then recover the events it missed.
      </p>`;
  }
  return html`<h2 id="recover">Recover missed events</h2>
    <form class="card" method="post" action="${base}/webhooks/${endpoint.id}/recover" novalidate>
      ${csrfField(ctx.session.csrfToken)} ${formError(errors)}
      <p class="hint">
        Sends this endpoint again, one at a time and oldest first, every event of the window it has not acknowledged
        (answered <code>success</code>), including events made while it was disabled: each once the one before it has
        been answered; one that fails is retried on its schedule while the rest go on. Deliveries still being retried
        take their places instead of being sent twice.
      </p>
      ${field({ name: 'since', label: 'Since', value: view.values?.since ?? deps.recovery.suggestedSince(endpoint.failingSince), errors, required: true, hint: 'ISO 8601 time, e.g. 2026-11-22T18:30:00Z; within the retention of events (30 days by default)' })}
      ${field({ name: 'until', label: 'Until (optional)', value: view.values?.until, errors, hint: 'Empty: now' })}
      <button type="submit">Recover events</button>
    </form>
    ${
      result
        ? html`<p class="card" role="status" id="recover-result">
            ${result.events} event(s) from ${when(result.since)} to ${when(result.until)} are being sent again one at a
            time, oldest first (${result.deliveriesCreated} new deliveries, ${result.deliveriesRescheduled} retries
            brought forward).
          </p>`
        : ''
    }`;
}

/** POST …/recover: the API's POST /webhook_endpoints/{id}/recover, audited with the member and address. */
export function webhookRecoverPages(
  app: App,
  deps: DashboardDeps,
  detailPage: (ctx: PageContext, id: string, recover: RecoverView) => Promise<SafeHtml>,
): void {
  page(app, deps, 'POST', '/developers/webhooks/:id/recover', 'webhooks.resend', async (ctx) => {
    const id = (ctx.request.params as { id: string }).id;
    const values = { since: text(ctx.form, 'since').trim(), until: text(ctx.form, 'until').trim() };
    try {
      const input = validated<RecoverBody>(RecoverBody, given(values));
      const result = await deps.recovery.recover(ctx.merchant, id, input, {
        traceId: ctx.request.id,
        member: `member:${ctx.actor.memberId}`,
        clientAddress: ctx.actor.clientAddress,
      });
      return detailPage(ctx, id, { result, values });
    } catch (err) {
      // Disabled meanwhile (409): said above the form, like any refusal.
      if (err instanceof DomainError && err.code === 'endpoint_disabled') {
        ctx.reply.code(statusOf(err));
        return detailPage(ctx, id, { values, errors: { form: err.message } });
      }
      ctx.reply.code(400);
      return detailPage(ctx, id, { values, errors: fieldErrors(err, 'since') });
    }
  });
}
