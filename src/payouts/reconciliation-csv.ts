import { csvCell } from '../csv.js';
import { reconciliationColumns, type ReconciliationRow } from './schemas.js';

/**
 * One row of the reconciliation CSV. Ids, types, amounts (plain signed numbers, so that a
 * spreadsheet reads −500 as a number), timestamps and currency codes are the service's own and
 * need no quoting; the order number and card brand come from merchants and cardholders and go
 * through csvCell, which quotes and defuses formulas.
 */
function reportLine(row: ReconciliationRow): string {
  return (
    `${row.payoutId},${row.balanceTransactionId},${row.type},${row.source},${csvCell(row.orderNo)},` +
    `${row.created},${row.availableOn},${row.gross},${row.fee},${row.net},${row.currency},` +
    `${csvCell(row.cardBrand)},${row.last4 ?? ''}\r\n`
  );
}

/** The report as CSV (the API's and the dashboard's), header first, then one chunk per batch of rows. */
export async function* reconciliationCsv(batches: AsyncIterable<ReconciliationRow[]>): AsyncGenerator<string> {
  yield `${reconciliationColumns.join(',')}\r\n`;
  for await (const batch of batches) yield batch.map(reportLine).join('');
}
