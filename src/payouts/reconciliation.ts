import type { Db } from '../db/db.js';
import * as queries from './queries.js';
import type { ReconciliationRow } from './schemas.js';

const reconciliationBatchSize = 500;

/**
 * A payout's reconciliation report (docs/balances.md, Payouts): every entry the payout settles, in
 * batches read as the caller consumes them, so that a payout of any size is exported in constant memory.
 */
export async function* reconciliationBatches(db: Db, id: string): AsyncIterable<ReconciliationRow[]> {
  let after: { created: Date; id: string } | undefined;
  for (;;) {
    const batch = await db.transaction(async (tx) => {
      // Without statistics the planner takes the payout's entries for a few and would read
      // them all and sort them for every batch (a report's time growing with the square of
      // its size); each batch is to be the next range of the payout's index, in its order.
      await tx.execute('SET LOCAL enable_bitmapscan = off');
      await tx.execute('SET LOCAL enable_sort = off');
      return queries.selectReconciliationBatch(tx, id, after, reconciliationBatchSize);
    });
    yield batch.map((row) => ({
      payoutId: id,
      balanceTransactionId: row.id,
      type: row.type,
      source: row.source,
      orderNo: row.order_no,
      created: row.created_at,
      availableOn: row.available_on,
      gross: row.amount,
      fee: row.fee,
      net: row.net,
      currency: row.currency,
      cardBrand: row.card_brand,
      last4: row.last4,
    }));
    const last = batch[batch.length - 1];
    if (batch.length < reconciliationBatchSize || !last) return;
    after = { created: last.created_at_cursor, id: last.id };
  }
}
