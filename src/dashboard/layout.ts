import type { SessionView } from '../team/service.js';
import { can, roleNames, type Permission } from '../team/permissions.js';
import { formatAmount } from '../money.js';
import { html, type HtmlValue, type SafeHtml } from './html.js';

export const dashboardBase = '/dashboard';

/** Navigation entries and the permission that opens each: a member sees only what the server allows. */
const navigation: Array<{ path: string; label: string; permission: Permission | null }> = [
  { path: '/', label: 'Home', permission: 'payments.read' },
  { path: '/payments', label: 'Payments', permission: 'payments.read' },
  { path: '/customers', label: 'Customers', permission: 'customers.read' },
  { path: '/refunds', label: 'Refunds', permission: 'refunds.read' },
  { path: '/invoices', label: 'Invoices', permission: 'invoices.read' },
  { path: '/developers/webhooks', label: 'Webhooks', permission: 'webhooks.read' },
  { path: '/developers/events', label: 'Events', permission: 'events.read' },
  { path: '/developers/request-logs', label: 'Request logs', permission: 'request_logs.read' },
  { path: '/developers/api-keys', label: 'API keys', permission: 'api_keys.manage' },
  { path: '/team', label: 'Team', permission: 'team.manage' },
  { path: '/settings', label: 'Settings', permission: 'settings.manage' },
  { path: '/audit-log', label: 'Audit log', permission: 'audit_log.read' },
  { path: '/account/two-factor', label: 'Two-factor', permission: null },
];

export interface PageOptions {
  title: string;
  session: SessionView | null;
  /** The path under /dashboard of this page, to mark it in the navigation. */
  current?: string;
  notice?: string;
}

export function csrfField(token: string): SafeHtml {
  return html`<input type="hidden" name="_csrf" value="${token}" />`;
}

export function layout(options: PageOptions, body: HtmlValue): SafeHtml {
  const { session } = options;
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${options.title} · Tessera dashboard</title>
        <link rel="stylesheet" href="${dashboardBase}/assets/dashboard.css" />
      </head>
      <body>
        <a class="skip" href="#content">Skip to content</a>
        ${session ? topBar(session, options.current) : html`<header class="top"><span class="brand">Tessera</span></header>`}
        <main id="content">
          ${options.notice ? html`<p class="notice" role="status">${options.notice}</p>` : ''} ${body}
        </main>
      </body>
    </html>`;
}

function topBar(session: SessionView, current: string | undefined): SafeHtml {
  const role = session.member.role;
  const links = navigation
    .filter((entry) => entry.permission === null || can(role, entry.permission))
    .map(
      (entry) =>
        html`<li>
          <a
            href="${dashboardBase}${entry.path === '/' ? '' : entry.path}"
            ${entry.path === current ? html`aria-current="page"` : ''}
            >${entry.label}</a
          >
        </li>`,
    );
  const other = session.mode === 'test' ? 'live' : 'test';
  return html`<header class="top">
    <span class="brand">Tessera</span>
    <nav class="main" aria-label="Main">
      <ul>
        ${links}
      </ul>
    </nav>
    <form class="inline" method="post" action="${dashboardBase}/mode">
      ${csrfField(session.csrfToken)}
      <span class="mode-${session.mode}">${session.mode === 'test' ? 'Test data' : 'Live data'}</span>
      <input type="hidden" name="mode" value="${other}" />
      <button class="secondary" type="submit">Show ${other} data</button>
    </form>
    <span>${session.member.name} (${roleNames[role]})</span>
    <form class="inline" method="post" action="${dashboardBase}/sign-out">
      ${csrfField(session.csrfToken)}
      <button class="secondary" type="submit">Sign out</button>
    </form>
  </header>`;
}

/** Field errors by name (the API's `data.param`), shown beside their fields. */
export type FieldErrors = Record<string, string>;

export function field(options: {
  name: string;
  label: string;
  value?: string;
  type?: string;
  errors?: FieldErrors;
  hint?: string;
  required?: boolean;
  autocomplete?: string;
  inputmode?: string;
}): SafeHtml {
  const error = options.errors?.[options.name];
  const id = `f-${options.name}`;
  return html`<div class="field">
    <label for="${id}">${options.label}</label>
    ${options.hint ? html`<span class="hint" id="${id}-hint">${options.hint}</span>` : ''}
    <input
      id="${id}"
      name="${options.name}"
      type="${options.type ?? 'text'}"
      value="${options.value ?? ''}"
      ${options.required ? html`required` : ''}
      ${options.autocomplete ? html`autocomplete="${options.autocomplete}"` : ''}
      ${options.inputmode ? html`inputmode="${options.inputmode}"` : ''}
      ${error ? html`aria-invalid="true" aria-describedby="${id}-error"` : ''}
    />
    ${error ? html`<span class="error" id="${id}-error">${error}</span>` : ''}
  </div>`;
}

export function select(options: {
  name: string;
  label: string;
  value?: string;
  choices: ReadonlyArray<readonly [string, string]>;
  errors?: FieldErrors;
}): SafeHtml {
  const error = options.errors?.[options.name];
  const id = `f-${options.name}`;
  return html`<div class="field">
    <label for="${id}">${options.label}</label>
    <select id="${id}" name="${options.name}" ${error ? html`aria-invalid="true" aria-describedby="${id}-error"` : ''}>
      ${options.choices.map(
        ([value, label]) =>
          html`<option value="${value}" ${value === options.value ? html`selected` : ''}>${label}</option>`,
      )}
    </select>
    ${error ? html`<span class="error" id="${id}-error">${error}</span>` : ''}
  </div>`;
}

export function formError(errors: FieldErrors | undefined): SafeHtml | '' {
  return errors?.form ? html`<p class="form-error" role="alert">${errors.form}</p>` : '';
}

export function table(headers: readonly string[], rows: readonly SafeHtml[], empty: string): SafeHtml {
  if (rows.length === 0) return html`<p>${empty}</p>`;
  return html`<div class="table-wrap">
    <table>
      <thead>
        <tr>
          ${headers.map((header) => html`<th scope="col">${header}</th>`)}
        </tr>
      </thead>
      <tbody>
        ${rows}
      </tbody>
    </table>
  </div>`;
}

export function when(date: string | Date | null | undefined): string {
  if (!date) return '—';
  const text = typeof date === 'string' ? date : date.toISOString();
  return text.replace('T', ' ').replace(/\.\d{3}Z$/, ' UTC');
}

/** An amount in minor units (a string of digits) written for people, with its currency. */
export function money(amount: string, currency: string): string {
  return `${formatAmount(BigInt(amount), currency)} ${currency}`;
}
