/** When automatic payouts fall due (docs/balances.md, Payouts): pure date arithmetic in UTC. */

import type { FinanceRow } from '../ledger/finance-queries.js';

const weekdays = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];

/** The UTC day of `now`, `YYYY-MM-DD`: an automatic payout's key (one per merchant, currency and day). */
export function utcDay(now: Date): string {
  return now.toISOString().slice(0, 10);
}

/** Whether the merchant's schedule pays out on the UTC day of `now`. */
export function payoutDue(
  settings: Pick<FinanceRow, 'payout_interval' | 'payout_weekly_anchor' | 'payout_monthly_anchor'>,
  now: Date,
): boolean {
  switch (settings.payout_interval) {
    case 'manual':
      return false;
    case 'daily':
      return true;
    case 'weekly':
      return weekdays[now.getUTCDay()] === settings.payout_weekly_anchor;
    case 'monthly': {
      // A month shorter than the anchor pays on its last day (31 → 30 April, 28 February).
      const lastDay = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 0)).getUTCDate();
      return now.getUTCDate() === Math.min(settings.payout_monthly_anchor ?? 1, lastDay);
    }
  }
}
