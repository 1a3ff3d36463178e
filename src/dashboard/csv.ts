import { can } from '../team/permissions.js';
import { html, type SafeHtml } from '../web/html.js';
import type { PageContext } from './kit.js';

/**
 * One CSV cell (RFC 4180), safe to open in a spreadsheet: a cell that starts with = + - @ (or a
 * tab or carriage return) would be read as a formula, so it gets a leading apostrophe (OWASP
 * "CSV injection"); a cell with a comma, a quote or a line break is quoted, quotes doubled.
 */
export function csvCell(value: string | number | null | undefined): string {
  let text = value === null || value === undefined ? '' : String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvLine(cells: ReadonlyArray<string | number | null | undefined>): string {
  return `${cells.map(csvCell).join(',')}\r\n`;
}

/** The "Export CSV" link of a list page, with the list's current filters; only for roles that may export. */
export function exportLink(ctx: PageContext, path: string, filters: Record<string, string>): SafeHtml | '' {
  if (!can(ctx.actor.role, 'exports.read')) return '';
  const given = Object.entries(filters).filter(([, value]) => value !== '');
  const query = given.length > 0 ? `?${new URLSearchParams(given).toString()}` : '';
  return html`<p><a href="/dashboard${path}/export.csv${query}" download>Export CSV</a></p>`;
}
