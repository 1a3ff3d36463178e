/* CSV as the dashboard's exports and the payout reconciliation file write it (RFC 4180). */

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
