import type { SessionView } from '../team/service.js';
import { can, roleNames, type Permission } from '../team/permissions.js';
import { formatAmount } from '../money.js';
import {
  html,
  htmlDocument,
  labelCells,
  script,
  type HtmlDocument,
  type HtmlValue,
  type SafeHtml,
} from '../web/html.js';

export const dashboardBase = '/dashboard';

/** Navigation entries and the permission that opens each: a member sees only what the server allows. */
const navigation: Array<{ path: string; label: string; permission: Permission | null }> = [
  { path: '/', label: 'Home', permission: 'payments.read' },
  { path: '/payments', label: 'Payments', permission: 'payments.read' },
  { path: '/customers', label: 'Customers', permission: 'customers.read' },
  { path: '/refunds', label: 'Refunds', permission: 'refunds.read' },
  { path: '/disputes', label: 'Disputes', permission: 'disputes.read' },
  { path: '/balance', label: 'Balance', permission: 'payments.read' },
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

export function layout(options: PageOptions, body: HtmlValue): HtmlDocument {
  const { session } = options;
  return htmlDocument(
    (nonce) =>
      html`<!doctype html>
        <html lang="en">
          <head>
            <meta charset="utf-8" />
            <meta name="viewport" content="width=device-width, initial-scale=1" />
            <title>${options.title} · Tessera dashboard</title>
            <link rel="stylesheet" href="${dashboardBase}/assets/dashboard.css" />
            ${script(`${dashboardBase}/assets/dashboard.js`, nonce, { defer: true })}
          </head>
          <body class="${session ? 'signed-in' : 'signed-out'}">
            <a class="skip" href="#content">Skip to content</a>
            ${session ? topBar(session) : html`<header class="top"><span class="brand">Tessera</span></header>`}
            <div class="frame">
              ${session ? sideNavigation(session, options.current) : ''}
              <main id="content" tabindex="-1">
                <div aria-live="polite" role="status" class="live">
                  ${options.notice ? html`<p class="notice">${options.notice}</p>` : ''}
                </div>
                ${body}
              </main>
            </div>
          </body>
        </html>`,
  );
}

function navigationLinks(session: SessionView, current: string | undefined): SafeHtml[] {
  return navigation
    .filter((entry) => entry.permission === null || can(session.member.role, entry.permission))
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
}

/**
 * The side navigation at desktop widths and, on phones, the same links behind a "Menu" button
 * (a <details>, so it opens without script). One of the two is display:none at any width, so
 * a screen reader meets one navigation landmark.
 */
function sideNavigation(session: SessionView, current: string | undefined): SafeHtml {
  const links = navigationLinks(session, current);
  return html`<details class="menu">
      <summary>Menu</summary>
      <nav aria-label="Main">
        <ul>
          ${links}
        </ul>
      </nav>
    </details>
    <aside class="side">
      <nav aria-label="Main">
        <ul>
          ${links}
        </ul>
      </nav>
    </aside>`;
}

function topBar(session: SessionView): SafeHtml {
  const role = session.member.role;
  const other = session.mode === 'test' ? 'live' : 'test';
  return html`<header class="top">
    <span class="brand">Tessera</span>
    <span class="mode-${session.mode}">${session.mode === 'test' ? 'Test data' : 'Live data'}</span>
    <form class="inline" method="post" action="${dashboardBase}/mode">
      ${csrfField(session.csrfToken)}
      <input type="hidden" name="mode" value="${other}" />
      <button class="secondary" type="submit">Show ${other} data</button>
    </form>
    <span class="who">${session.member.name} (${roleNames[role]})</span>
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

/**
 * A list as a table; at phone widths each row becomes a stacked card whose cells carry their
 * column's name (the `data-label` the stylesheet shows, added by the kit's labelCells), so nothing
 * scrolls sideways; pages keep writing plain `<tr><td>…` rows.
 */
export function table(
  headers: readonly string[],
  rows: readonly SafeHtml[],
  empty: string | SafeHtml,
  caption?: string,
): SafeHtml {
  if (rows.length === 0) return typeof empty === 'string' ? html`<p class="empty">${empty}</p>` : empty;
  const labelled = labelCells(rows, headers);
  return html`<div class="table-wrap">
    <table class="list">
      ${
        caption
          ? html`<caption class="visually-hidden">
              ${caption}
            </caption>`
          : ''
      }
      <thead>
        <tr>
          ${headers.map((header) => html`<th scope="col">${header}</th>`)}
        </tr>
      </thead>
      <tbody>
        ${labelled}
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
