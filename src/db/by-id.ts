/** The name of the row in selectOwnRowById's statement, for columns that must name it. */
export const ownRowAlias = 'row_by_id';

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
    `SELECT ${columns} FROM (SELECT * FROM ${table} WHERE id = $1 OFFSET 0) AS ${ownRowAlias} ` +
    `WHERE merchant_id = $2 AND mode = $3${extra}`
  );
}

/**
 * The WHERE condition "the row with id `id`, if it belongs to merchant `merchant` in mode `mode`",
 * for statements that cannot be wrapped like selectOwnRowById (UPDATE): the row is found by its
 * primary key alone, for the same reason. The arguments are the statement's placeholders.
 */
export function ownRowCondition(table: string, id: string, merchant: string, mode: string): string {
  return (
    `id = (SELECT own.id FROM (SELECT id, merchant_id, mode FROM ${table} WHERE id = ${id} OFFSET 0) AS own ` +
    `WHERE own.merchant_id = ${merchant} AND own.mode = ${mode})`
  );
}
