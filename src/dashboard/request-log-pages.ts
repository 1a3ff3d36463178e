import type { App } from '../http/server.js';
import type { PageRequest } from '../db/pagination.js';
import { html, type SafeHtml } from '../web/html.js';
import { field, formError, layout, select, table, when, type FieldErrors } from './layout.js';
import { fieldErrors, page, type DashboardDeps } from './kit.js';
import { emptyState } from './ui.js';

const base = '/dashboard/developers/request-logs';
const statusClasses = ['2xx', '3xx', '4xx', '5xx'] as const;
const cursorForm = /^req_\d{19}$/;

/** A field of the filter form refused with its message (shown beside it). */
const refuse = (name: string, message: string) => Object.assign(new Error(message), { field: name });

function filtersOf(query: Record<string, string>) {
  const status = query.status ?? '';
  const path = (query.path ?? '').trim();
  if (status && !(statusClasses as readonly string[]).includes(status))
    throw refuse('status', `status must be one of: ${statusClasses.join(', ')}`);
  if (path.length > 200) throw refuse('path', 'path must be at most 200 characters');
  const pageRequest: PageRequest = { limit: 50 };
  for (const name of ['startingAfter', 'endingBefore'] as const) {
    const cursor = query[name];
    if (cursor === undefined || cursor === '') continue;
    if (!cursorForm.test(cursor)) throw refuse('form', `${name} must be a request log id (req_ and 19 digits)`);
    pageRequest[name] = cursor;
  }
  return { status, path, pageRequest };
}

/** API request logs (docs/dashboard.md#roles: Developer, Administrator, Owner): newest first, filtered, by cursor. */
export function requestLogPages(app: App, deps: DashboardDeps): void {
  page(app, deps, 'GET', '/developers/request-logs', 'request_logs.read', async (ctx) => {
    const query = ctx.request.query as Record<string, string>;
    const shown = { status: query.status ?? '', path: query.path ?? '' };
    let errors: FieldErrors | undefined;
    let rows: SafeHtml[] = [];
    let links: SafeHtml | '' = '';
    try {
      const { status, path, pageRequest } = filtersOf(query);
      const logs = await deps.requestLogs.list(
        ctx.merchant,
        { ...(status ? { statusClass: Number(status[0]) } : {}), ...(path ? { path } : {}) },
        pageRequest,
      );
      rows = logs.data.map(
        (log) =>
          html`<tr>
            <td>${when(log.created)}</td>
            <td>${log.method}</td>
            <td><code>${log.route}</code></td>
            <td class="${log.statusCode >= 400 ? 'status-failed' : 'status-succeeded'}">${log.statusCode}</td>
            <td class="num">${log.latencyMs} ms</td>
            <td class="hide-narrow"><code>${log.traceId}</code></td>
            <td class="hide-narrow">${log.keyKind}</td>
          </tr>`,
      );
      links = pager(shown, logs.data, logs.hasMore, pageRequest);
    } catch (err) {
      const { field: name, message } = err as { field?: string; message?: string };
      errors = name ? { [name]: message ?? '' } : fieldErrors(err, 'form');
      if (errors.startingAfter || errors.endingBefore) errors = { form: errors.startingAfter ?? errors.endingBefore! };
      ctx.reply.code(400);
    }
    return layout(
      { title: 'API request logs', session: ctx.session, current: '/developers/request-logs' },
      html`<h1>API request logs</h1>
        <p class="hint">
          Requests to the API with this mode's keys, newest first, kept 30 days. The route is shown, never the URL or a
          body.
        </p>
        <form class="filters" method="get" action="${base}" novalidate>
          ${select({ name: 'status', label: 'Status', value: shown.status, errors, choices: [['', 'Any'], ...statusClasses.map((value) => [value, value] as const)] })}
          ${field({ name: 'path', label: 'Path contains', value: shown.path, errors, hint: 'e.g. payments or /refunds/:id' })}
          <button type="submit">Filter</button>
        </form>
        ${formError(errors)}
        ${table(
          ['Time', 'Method', 'Route', 'Status', 'Latency', 'X-TraceId', 'Key'],
          rows,
          shown.status || shown.path.trim()
            ? emptyState({
                title: 'No requests match these filters',
                body: html`<a href="${base}">Clear the filters</a> to see every request of the last 30 days.`,
              })
            : emptyState({
                title: 'No API requests yet',
                body: "Requests made with this mode's keys show here a moment later. Make some from your terminal:",
                command: 'npx tessera trigger payment.succeeded',
              }),
        )}
        ${links}`,
    );
  });
}

/** "Newer" and "Older" links that keep the filters (cursor pagination, docs/api.md#lists). */
function pager(
  filters: { status: string; path: string },
  rows: ReadonlyArray<{ id: string }>,
  hasMore: boolean,
  request: PageRequest,
): SafeHtml | '' {
  const backward = request.endingBefore !== undefined;
  const newer = backward ? hasMore : request.startingAfter !== undefined;
  const older = backward ? true : hasMore;
  const link = (name: 'startingAfter' | 'endingBefore', id: string) =>
    `${base}?${new URLSearchParams({ ...filters, [name]: id }).toString()}`;
  const first = rows[0];
  const last = rows[rows.length - 1];
  if (!first || !last) return '';
  return html`<nav class="actions" aria-label="Pages">
    ${newer ? html`<a href="${link('endingBefore', first.id)}">← Newer</a>` : ''}
    ${older ? html`<a href="${link('startingAfter', last.id)}">Older →</a>` : ''}
  </nav>`;
}
