/**
 * `SELECT <columns>` of the row with id $1 if it belongs to merchant $2 in mode $3 (and meets
 * `condition`, over the same columns). The row is found by its primary key alone: OFFSET 0 keeps
 * the merchant's conditions out of the index search. Otherwise a cached generic plan made without
 * statistics (PGlite never gathers them; PostgreSQL only after autovacuum's first ANALYZE) may
 * choose the (merchant_id, mode, created_at, id) list index and walk all the merchant's rows
 * comparing ids — it did, and halved payment throughput.
 */
export function selectOwnRowById(table: string, columns: string, condition?: string): string {
  const extra = condition ? ` AND ${condition}` : '';
  return (
    `SELECT ${columns} FROM (SELECT * FROM ${table} WHERE id = $1 OFFSET 0) AS row_by_id ` +
    `WHERE merchant_id = $2 AND mode = $3${extra}`
  );
}
