import type { Clock } from '../clock.js';
import type { Queryable } from '../db/db.js';

const dayMs = 24 * 60 * 60 * 1000;

/** One UTC day of a merchant's payments in one mode (the dashboard's home, issue 11). */
export interface DaySummary {
  /** YYYY-MM-DD, UTC. */
  day: string;
  /** Payments created that day, whatever became of them. */
  count: number;
  succeeded: number;
  failed: number;
  /** Money received by that day's succeeded payments, per currency: minor units as strings of digits. */
  volume: Record<string, string>;
}

/**
 * The last `days` UTC days up to today, oldest first, every day present (a day without payments
 * has zeros). Counted in the database by day and currency over the payments_list index: the
 * inner ORDER BY is that index's, so that without statistics no other (merchant, mode, …) index
 * is scanned whole for the range.
 */
export async function dailySummary(
  db: Queryable,
  clock: Clock,
  merchant: { merchantId: string; mode: string },
  days: number,
): Promise<DaySummary[]> {
  const today = Math.floor(clock.now().getTime() / dayMs) * dayMs;
  const since = new Date(today - (days - 1) * dayMs);
  const until = new Date(today + dayMs);
  const rows = await db.query<{
    day: string;
    currency: string;
    count: string | number;
    succeeded: string | number;
    failed: string | number;
    volume: string;
  }>(
    `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, currency,
            count(*) AS count,
            count(*) FILTER (WHERE status = 'succeeded') AS succeeded,
            count(*) FILTER (WHERE status = 'failed') AS failed,
            coalesce(sum(amount_received) FILTER (WHERE status = 'succeeded'), 0)::text AS volume
       FROM (SELECT created_at, currency, status, amount_received FROM payments
              WHERE merchant_id = $1 AND mode = $2 AND created_at >= $3 AND created_at < $4
              ORDER BY created_at DESC, id DESC OFFSET 0) AS recent
      GROUP BY 1, 2`,
    [merchant.merchantId, merchant.mode, since, until],
  );
  const summary = Array.from({ length: days }, (_, index): DaySummary => ({
    day: new Date(since.getTime() + index * dayMs).toISOString().slice(0, 10),
    count: 0,
    succeeded: 0,
    failed: 0,
    volume: {},
  }));
  const byDay = new Map(summary.map((entry) => [entry.day, entry]));
  for (const row of rows) {
    const entry = byDay.get(row.day);
    if (!entry) continue;
    entry.count += Number(row.count);
    entry.succeeded += Number(row.succeeded);
    entry.failed += Number(row.failed);
    if (row.volume !== '0') entry.volume[row.currency] = row.volume;
  }
  return summary;
}
