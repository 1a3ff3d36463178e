import { can } from '../team/permissions.js';
import { html, type SafeHtml } from '../web/html.js';
import type { PageContext } from './kit.js';

/** The "Export CSV" link of a list page, with the list's current filters; only for roles that may export. */
export function exportLink(ctx: PageContext, path: string, filters: Record<string, string>): SafeHtml | '' {
  if (!can(ctx.actor.role, 'exports.read')) return '';
  const given = Object.entries(filters).filter(([, value]) => value !== '');
  const query = given.length > 0 ? `?${new URLSearchParams(given).toString()}` : '';
  return html`<p><a href="/dashboard${path}/export.csv${query}" download>Export CSV</a></p>`;
}
